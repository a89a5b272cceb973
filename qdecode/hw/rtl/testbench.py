"""Plain Verilog-2005 test bench ``tb`` replaying an ``export-vectors`` directory through ``bp_top``.

The bench reads, relative to the simulator's working directory (the vector directory):
``syndromes.hex`` and ``expected_hard.hex`` with ``$readmemh`` (bit vectors, bit ``i`` = 2^i, as
:mod:`qdecode.hw.vectors` writes them), ``expected_iters.txt`` and ``expected_converged.txt``
with ``$fscanf("%d")`` (decimal lines). Per shot it drives ``syndrome`` and a one-cycle
``start`` on the falling clock edge, counts rising edges from the ``start`` edge until ``done``,
and compares four fields: ``hard``, ``iterations``, ``converged`` and the latency
``cycles == iterations * CPI + 2`` (``CPI`` = cycles per iteration: 1 for :mod:`qdecode.hw.rtl.top`,
``ceil(m/P) + ceil(n/P)`` for :mod:`qdecode.hw.rtl.folded`). Output lines (parsed by
:mod:`qdecode.hw.rtl.simulate`)::

    MISMATCH shot=<s> field=<hard|iterations|converged|cycles> expected=<hex|dec> got=<hex|dec>
    RESULT shots=<S> hard=<k> iterations=<k> converged=<k> cycles=<k> failed=<k> total_cycles=<c>
    <P> passed, <F> failed
"""

from __future__ import annotations

from qdecode.errors import InputError
from qdecode.hw.rtl.verilog import HEADER

#: Clock, the mismatch reporter and the files every vector set has (both benches).
_PREAMBLE = """    always #5 clk = ~clk;
    task report;
        input [8*10-1:0] field;
        input integer want, got;
        begin
            if (reported < MAX_REPORT)
                $display("MISMATCH shot=%0d field=%0s expected=%0d got=%0d", s, field, want, got);
            reported = reported + 1;
        end
    endtask
    initial begin
        $readmemh("syndromes.hex", syn_mem);
        $readmemh("expected_hard.hex", hard_mem);
        fi = $fopen("expected_iters.txt", "r");
        fc = $fopen("expected_converged.txt", "r");
"""

#: One shot of either bench: drive ``syndrome`` and a one-cycle ``start`` on the falling edge, count
#: rising edges until ``done`` (or ``TIMEOUT``), then compare the fields every design has.
_RUN_SHOT = """            @(negedge clk);
            syndrome = syn_mem[s];
            start = 1'b1;
            @(posedge clk);
            cycles = 1;
            #1 start = 1'b0;
            while (!done && cycles < TIMEOUT) begin
                @(posedge clk);
                #1 cycles = cycles + 1;
            end
            total_cycles = total_cycles + cycles;
            bad = 0;
            if (hard !== hard_mem[s]) begin
                bad_hard = bad_hard + 1; bad = 1;
                if (reported < MAX_REPORT)
                    $display("MISMATCH shot=%0d field=hard expected=%h got=%h", s, hard_mem[s], hard);
                reported = reported + 1;
            end
            if (iterations !== ei) begin bad_iter = bad_iter + 1; bad = 1; report("iterations", ei, iterations); end
            if (converged !== ec[0]) begin bad_conv = bad_conv + 1; bad = 1; report("converged", ec, converged); end
"""


def emit_testbench(m: int, n: int, shots: int, iter_bits: int, max_iter: int, *, max_report: int = 20,
                   cycles_per_iteration: int = 1, relay: tuple[int, int, int] | None = None) -> str:
    """Verilog text of the bench for ``shots`` vectors of an ``(m, n)`` decoder taking
    ``cycles_per_iteration`` clock cycles per iteration (the ``cycles`` field checks
    ``iterations * cycles_per_iteration + 2``).

    ``relay = (legs_bits, weight_bits, legs)``: the bench of :mod:`qdecode.hw.rtl.relay_top`'s
    ``relay_top`` instead: it also reads ``expected_legs.txt`` and ``expected_weight.txt``, compares
    ``legs_run`` and ``weight``, checks ``cycles == iterations + legs_run + 2`` and appends
    ``legs=<k> weight=<k>`` to the ``RESULT`` line."""
    if relay is not None:
        return _relay_bench(m, n, shots, iter_bits, max_iter, max_report, *relay)
    if shots < 1:
        raise InputError(f"a bench needs at least one shot, got {shots}")
    if cycles_per_iteration < 1:
        raise InputError(f"cycles_per_iteration must be >= 1, got {cycles_per_iteration}")
    cpi = int(cycles_per_iteration)
    timeout = max_iter * cpi + 8
    return HEADER + f"""// Replays {shots} shots of an export-vectors directory (run the simulator inside it).
module tb;
    localparam M = {m}, N = {n}, S = {shots}, IW = {iter_bits};
    localparam TIMEOUT = {timeout}, MAX_REPORT = {max_report}, CPI = {cpi};
    reg clk = 1'b0, rst = 1'b1, start = 1'b0;
    reg [M-1:0] syndrome = {{M{{1'b0}}}};
    wire done, converged;
    wire [IW-1:0] iterations;
    wire [N-1:0] hard;
    bp_top dut (.clk(clk), .rst(rst), .start(start), .syndrome(syndrome), .done(done), .converged(converged),
                .iterations(iterations), .hard(hard));
    reg [M-1:0] syn_mem [0:S-1];
    reg [N-1:0] hard_mem [0:S-1];
    integer fi, fc, s, r, ei, ec, cycles, total_cycles, failed, bad;
    integer bad_hard, bad_iter, bad_conv, bad_cyc, reported;
{_PREAMBLE}        if (fi == 0 || fc == 0) begin
            $display("ERROR cannot open expected_iters.txt / expected_converged.txt");
            $finish;
        end
        bad_hard = 0; bad_iter = 0; bad_conv = 0; bad_cyc = 0; failed = 0; total_cycles = 0; reported = 0;
        repeat (2) @(negedge clk);
        rst = 1'b0;
        for (s = 0; s < S; s = s + 1) begin
            r = $fscanf(fi, "%d\\n", ei);
            r = $fscanf(fc, "%d\\n", ec);
{_RUN_SHOT}            if (cycles != ei * CPI + 2) begin
                bad_cyc = bad_cyc + 1; bad = 1; report("cycles", ei * CPI + 2, cycles);
            end
            failed = failed + bad;
        end
        $display("RESULT shots=%0d hard=%0d iterations=%0d converged=%0d cycles=%0d failed=%0d total_cycles=%0d",
                 S, bad_hard, bad_iter, bad_conv, bad_cyc, failed, total_cycles);
        $display("%0d passed, %0d failed", S - failed, failed);
        $fclose(fi);
        $fclose(fc);
        $finish;
    end
endmodule
"""


def _relay_bench(m: int, n: int, shots: int, iter_bits: int, max_iter: int, max_report: int, legs_bits: int,
                 weight_bits: int, legs: int) -> str:
    if shots < 1:
        raise InputError(f"a bench needs at least one shot, got {shots}")
    timeout = max_iter + legs + 8
    return HEADER + f"""// Replays {shots} shots of a relay-bp export-vectors directory (run the simulator inside it).
module tb;
    localparam M = {m}, N = {n}, S = {shots}, IW = {iter_bits}, LW = {legs_bits}, WW = {weight_bits};
    localparam TIMEOUT = {timeout}, MAX_REPORT = {max_report};
    reg clk = 1'b0, rst = 1'b1, start = 1'b0;
    reg [M-1:0] syndrome = {{M{{1'b0}}}};
    wire done, converged;
    wire [IW-1:0] iterations;
    wire [LW-1:0] legs_run;
    wire signed [WW-1:0] weight;
    wire [N-1:0] hard;
    relay_top dut (.clk(clk), .rst(rst), .start(start), .syndrome(syndrome), .done(done), .converged(converged),
                   .iterations(iterations), .legs_run(legs_run), .weight(weight), .hard(hard));
    reg [M-1:0] syn_mem [0:S-1];
    reg [N-1:0] hard_mem [0:S-1];
    integer fi, fc, fl, fw, s, r, ei, ec, el, ew, cycles, total_cycles, failed, bad;
    integer bad_hard, bad_iter, bad_conv, bad_cyc, bad_legs, bad_w, reported;
{_PREAMBLE}        fl = $fopen("expected_legs.txt", "r");
        fw = $fopen("expected_weight.txt", "r");
        if (fi == 0 || fc == 0 || fl == 0 || fw == 0) begin
            $display("ERROR cannot open expected_iters / converged / legs / weight .txt");
            $finish;
        end
        bad_hard = 0; bad_iter = 0; bad_conv = 0; bad_cyc = 0; bad_legs = 0; bad_w = 0; failed = 0;
        total_cycles = 0; reported = 0;
        repeat (2) @(negedge clk);
        rst = 1'b0;
        for (s = 0; s < S; s = s + 1) begin
            r = $fscanf(fi, "%d\\n", ei);
            r = $fscanf(fc, "%d\\n", ec);
            r = $fscanf(fl, "%d\\n", el);
            r = $fscanf(fw, "%d\\n", ew);
{_RUN_SHOT}            if (legs_run !== el) begin bad_legs = bad_legs + 1; bad = 1; report("legs", el, legs_run); end
            if (weight != ew) begin bad_w = bad_w + 1; bad = 1; report("weight", ew, weight); end
            if (cycles != ei + el + 2) begin bad_cyc = bad_cyc + 1; bad = 1; report("cycles", ei + el + 2, cycles); end
            failed = failed + bad;
        end
        $write("RESULT shots=%0d hard=%0d iterations=%0d converged=%0d cycles=%0d failed=%0d total_cycles=%0d",
               S, bad_hard, bad_iter, bad_conv, bad_cyc, failed, total_cycles);
        $display(" legs=%0d weight=%0d", bad_legs, bad_w);
        $display("%0d passed, %0d failed", S - failed, failed);
        $fclose(fi); $fclose(fc); $fclose(fl); $fclose(fw);
        $finish;
    end
endmodule
"""
