"""The byte-level language model behind sem-OSD's priors: the text it learns from and its n-gram fit.

sem-OSD (:mod:`qdecode.decoders.sem_osd`) decodes a message of English text with a prior on its
bytes; :mod:`qdecode.decoders.lm_prior` turns a language model into that prior. This subpackage
holds the training side of the model, below the decoders:

* :mod:`qdecode.language_model.corpus`: the offline English corpus (bytes, the split into language
  model and channel-test text, hashes); numpy only. The sweeps' ``text`` source
  (:mod:`qdecode.sims.text_source`) transmits its channel-test part.
* :mod:`qdecode.language_model.ngram`: the Kneser-Ney byte n-gram fitted on the corpus (counts,
  temperature) and its disk cache, in the arrays :mod:`qdecode.kernels.sem_osd` reads.

Users: :mod:`qdecode.decoders.lm_prior` (sem-OSD's priors), :mod:`qdecode.sims.text_source` and
the byte Transformer's trainer :mod:`qdecode.neural.lm_train`. Nothing is imported here, so
``import qdecode.language_model.corpus`` loads numpy only.
"""
