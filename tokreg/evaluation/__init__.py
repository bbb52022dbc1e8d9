"""The evaluation wing: measuring versions.

metrics holds one pure function per metric; evaluate measures versions on texts (and the parity
of parallel texts); audit finds the tokens a model would never or rarely see; charts draws
training curves and evaluations, as text for the terminal or as PNG files.

May import: encoding/, training/ (the corpus fingerprint and the round trip, applied to texts), algorithms/,
store/ (the stored results), the shared modules at the top and the core.
"""
