"""Code constructions and their algebra, and the code catalogue (``qdecode codes``).

Quantum CSS codes: rotated surface, bivariate-bicycle (BB), toric and repetition, hypergraph product
(HGP), generalized bicycle (GB, including the coprime-BB instances), lifted product (LP), triangular
colour; with CSS helpers and exact distance by MILP. Classical codes: BCH, Reed-Solomon, polar and
PAC (with CRC); GF(2) / GF(2^m) algebra and ``.alist`` I/O. Names and parameters: :mod:`.catalog`.
"""
