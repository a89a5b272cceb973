"""Neural models of qdecode (``qdecode.neural``).

The convolutional pre-decoder of ``nn-pymatching``:

* :mod:`~qdecode.neural.predecoder_layout`: detector volume, footprint classes, input
  tensors and per-column gathering (numpy only);
* :mod:`~qdecode.neural.mechanism_sampler`: DEM-mechanism sampler with labels (numpy only);
* :mod:`~qdecode.neural.predecoder_runtime`: loading shipped/trained models, onnxruntime or
  torch inference (imports its backend lazily);
* :mod:`~qdecode.neural.predecoder_model` and :mod:`~qdecode.neural.predecoder_train`
  (torch): the network, training, calibration, export.

Importing this package imports no torch; only the last two modules need it.

The CRISP sequential neural decoder of polar / PAC codes (torch; inference without torch in
:mod:`qdecode.decoders.crisp`, onnxruntime):

* :mod:`~qdecode.neural.crisp_model`: the GRU and dilated-conv networks, ONNX export;
* :mod:`~qdecode.neural.crisp_train`: on-the-fly data, curricula (l2r, n2c, abrupt),
  checkpoints, model card (``qdecode train crisp``); configs in ``configs/crisp_*.json``.

The byte-level Transformer prior of sem-OSD (torch; inference without torch in
:mod:`qdecode.decoders.lm_transformer`, onnxruntime):

* :mod:`~qdecode.neural.lm_model`: the denoising byte Transformer (posterior-ready prior rows),
  ONNX export;
* :mod:`~qdecode.neural.lm_train`: on-the-fly text + BPSK-AWGN data, temperature calibration,
  checkpoints, model card (``qdecode train lm``); config ``configs/lm_byte.json``.
"""
