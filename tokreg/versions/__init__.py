"""The versions wing: what happens to versions once they exist.

lockfile reads, writes and applies a project's pins (`tokreg.lock`), dataset_pins those of
token datasets (in front of `tokreg.open_dataset`); verify checks a stored
version end to end; diff compares two versions; details is what `show` says of one; ancestry
is a token's tree of merges; samples are the strings encoded when a version is written and
re-encoded by verify; import_export reads other tools' files as `TokenizerData` and writes a
version in their formats. Each hands the Registry a frozen result of its own (`VersionDiff`,
`Verification`, `VersionDetails`, `TokenInfo`, `Sample`), with the JSON the faces print.

May import: encoding/, training/ (the id check of extensions), evaluation/ (diff's measures on
text), datasets/ (the reader a dataset pin guards), algorithms/, formats/, store/ (the ref
resolver and the reads), the shared modules at the top and the core.
"""
