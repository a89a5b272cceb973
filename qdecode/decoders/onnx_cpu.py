"""One onnxruntime CPU session builder for the decoders that run shipped ONNX models (crisp, sem-OSD's transformer prior)."""

from __future__ import annotations


def cpu_session(path, threads: int | None, who: str):
    """An ``onnxruntime.InferenceSession`` of ``path`` on the CPU, ``threads`` intra-op threads (None: ORT's default).

    ``who`` names the caller in the ImportError raised when onnxruntime is missing; onnxruntime's own
    exceptions for an unreadable model propagate (callers turn them into their model errors).
    """
    try:
        import onnxruntime as ort
    except ImportError as exc:  # pragma: no cover - depends on the environment
        raise ImportError(f"{who} needs onnxruntime: pip install 'qdecode[neural]' ({exc})") from None
    opts = ort.SessionOptions()
    if threads:
        opts.intra_op_num_threads = threads
        opts.inter_op_num_threads = 1
    opts.log_severity_level = 3
    return ort.InferenceSession(str(path), sess_options=opts, providers=["CPUExecutionProvider"])
