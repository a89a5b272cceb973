"""5G NR LDPC in the classical sweep: the nr5g recipe, rows and their metadata, the plot with AFF3CT's points,
QAM channels, and the decoders' frame error rates against sionna's decoder on the same frames."""

from __future__ import annotations

import numpy as np
import pytest

from qdecode.sims.classical_points import BinaryCode, ClassicalRecipe, run_classical_batch


def test_recipe_parses_to_both_codes_and_decoders():
    from qdecode.sims.recipe import load_recipe

    rec = load_recipe("nr5g")
    codes = {t.classical.code for t in rec.tasks}
    assert codes == {"nr5g[bg=2,k=512,n=1024]", "nr5g[bg=1,k=6144,n=12288]"} and len(rec.tasks) == 20


def test_inline_sweep_rows_and_plot_with_published_points(tmp_path):
    from qdecode.cli.main import main
    from qdecode.cli.plot import _read, classical_references
    from qdecode.sims.store import read_rows

    out = tmp_path / "nr5g.csv"
    argv = ["sweep", "--code", "nr5g[bg=2,k=512,n=1024]", "--noise", "awgn", "--ebn0", "1.0,1.5",
            "--decoder", "ldpc-ms", "--max-shots", "512", "--max-errors", "20", "--out", str(out), "--workers", "0",
            "--quiet"]
    assert main(argv) == 0
    rows = read_rows(out)
    assert {r.json_metadata["ebn0"] for r in rows} == {1.0, 1.5}
    for r in rows:
        md = r.json_metadata
        assert (md["code"], md["k"], md["n"]) == ("nr5g[bg=2,k=512,n=1024]", 512, 1024)
        assert "ml_lb" not in r.custom_counts and r.custom_counts["bit_errors"] >= r.errors
        assert r.errors >= 20 or r.shots >= 512
    refs = classical_references(_read([str(out)]))
    aff3ct = [ref for ref in refs if ref.label.startswith("AFF3CT")]
    assert len(aff3ct) == 1 and aff3ct[0].ys[1] == pytest.approx(5.46e-2)
    png = tmp_path / "nr5g.png"
    assert main(["plot", str(out), "--out", str(png)]) == 0 and png.stat().st_size > 1000


@pytest.mark.parametrize("modulation, spec", [("qpsk", "nr5g[bg=2,k=512,n=1024,qm=2]"),
                                              ("16qam", "nr5g[bg=2,k=512,n=1024,qm=4]"),
                                              ("64qam", "nr5g[bg=2,k=512,n=1026,qm=6]")])
def test_qam_channel_decodes_at_high_snr_and_is_recorded(modulation, spec):
    """The standard's bit interleaving (qm) with its modulation; no frame errors at 8 dB."""
    point = ClassicalRecipe(spec, "awgn", ebn0=8.0, channel=(("modulation", modulation),))
    assert point.metadata()["modulation"] == modulation
    code = point.build_code()
    from qdecode.decoders.registry import DecoderSpec

    dec = DecoderSpec.create("ldpc-ms").build(code.code)
    errors, counts = run_classical_batch(code, point.build_channel(code.rate), dec, seed=3, shots=256)
    assert errors == 0 and counts["bit_errors"] == 0


def test_frame_errors_match_sionna_on_the_same_frames():
    """Layered offset min-sum (offset 0.5, 10 iterations) against sionna's LDPC5GDecoder with the same rule and
    schedule on identical LLRs: the frame error counts agree within binomial noise (the arithmetic differs:
    float32 against our 16-bit fixed point)."""
    torch = pytest.importorskip("torch")  # sionna runs on torch, which the neural extra installs (make test does)
    from sionna.phy.fec.ldpc import LDPC5GDecoder, LDPC5GEncoder

    from qdecode.codes.nr5g import Nr5gCode
    from qdecode.decoders.qc_ldpc import QcMinSumDecoder
    from qdecode.sims.channels import BpskAwgn

    code = Nr5gCode.from_params(bg=2, K=512, E=1024)
    rng = np.random.default_rng(11)
    msgs = rng.integers(0, 2, size=(1500, code.k), dtype=np.uint8)
    llr = BpskAwgn(ebn0_db=1.5, rate=0.5).transmit(code.encode(msgs), rng)
    ours = QcMinSumDecoder(code, bits=16, frac_bits=6, early_stop=False).decode_mother_llr_batch(llr)[:, :code.k]
    sdec = LDPC5GDecoder(LDPC5GEncoder(k=code.k, n=code.n), cn_update="offset-minsum", cn_schedule="layered",
                         num_iter=10, hard_out=True, return_infobits=True)
    with torch.no_grad():
        theirs = sdec(torch.tensor(-llr, dtype=torch.float32)).numpy().astype(np.uint8)
    fe_ours = int((ours != msgs).any(axis=1).sum())
    fe_theirs = int((theirs != msgs).any(axis=1).sum())
    assert fe_theirs > 100  # FER ~ 0.2 at 1.5 dB: the comparison has power
    assert abs(fe_ours - fe_theirs) <= 4 * np.sqrt(fe_theirs), (fe_ours, fe_theirs)


def test_rate_matched_view_has_no_parity_checks():
    view = BinaryCode.of(ClassicalRecipe("nr5g[bg=2,k=512,n=1024]", "awgn", ebn0=2.0).build_code().code)
    assert view.H is None and (view.n, view.k) == (1024, 512)


def test_sweep_counts_wrong_messages_of_rate_matched_codes():
    """A frame error of a 5G code is a wrong message bit of the decoder's own decisions: on the same seed, the
    sweep's count equals the message errors of decode_mother_llr_batch and is at most the sent-bit errors."""
    from qdecode.decoders.qc_ldpc import QcMinSumDecoder
    from qdecode.sims.channels import BpskAwgn

    point = ClassicalRecipe("nr5g[bg=2,k=512,n=1024]", "awgn", ebn0=1.5)
    code = point.build_code()
    dec = QcMinSumDecoder(code.code, early_stop=False)
    errors, counts = run_classical_batch(code, point.build_channel(code.rate), dec, seed=5, shots=600)
    rng = np.random.default_rng(5)
    msgs = rng.integers(0, 2, size=(600, code.k), dtype=np.uint8)
    sent = code.encode(msgs)
    llr = BpskAwgn(ebn0_db=1.5, rate=code.rate).transmit(sent, rng)
    mother = dec.decode_mother_llr_batch(llr)
    assert errors == int((mother[:, :code.k] != msgs).any(axis=1).sum()) > 30
    assert counts["bit_errors"] == int((mother[:, :code.k] != msgs).sum())
    assert errors <= int((dec.decode_llr_batch(llr) != sent).any(axis=1).sum())
