"""The versions wing: what happens to versions once they exist.

lockfile reads, writes and applies a project's pins (`tokreg.lock`); verify checks a stored
version end to end; diff compares two versions; ancestry is a token's tree of merges; samples
are the strings encoded when a version is written and re-encoded by verify; import_export reads
other tools' files as `TokenizerData` and writes a version in their formats.

May import: encoding/, training/ (the id check of extensions), evaluation/ (diff's measures on
text), algorithms/, formats/, store/ (the ref resolver), the shared modules at the top and the
core.
"""
