"""Code definitions: rotated surface code, bivariate-bicycle (BB) codes, CSS helpers, catalogue."""
