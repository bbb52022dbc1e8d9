"""The training wing: a `Corpus` and options in, one `FinishedVersion` (data.py: the data, its
run record, its content and hashes, made once) per vocabulary size out, ready for the store's
writer. It knows no database.

corpus/ reads the inputs as a stream and fingerprints them; counting_local counts them on this
machine and counting_dask on a Dask cluster, within the memory budget (budget); counts_file
writes and sums those counts as files; train_run is the run itself (count once, train every
size, attach the run record), reporting through progress; round_trip measures what each trained
version loses of the corpus text kept while counting (and what eval measures on a text); extend
makes descendants that keep a base's ids; reproduce retrains a version from its recorded run.

May import: encoding/, algorithms/, formats/, the shared modules at the top (errors, data,
content, files, patterns, package_version) and the core. Never store/, versions/ or
evaluation/.
"""
