"""Probes gather facts and never judge. `gpudoctor.probes.gather.collect()` runs them
concurrently: all of them, or only those whose facts the selected checks read (`Check.reads`).

The package itself imports nothing, so that `gpudoctor.probes.prestart` (imported by the entry
point before anything else) and `gpudoctor.probes.interface` stay cheap: `collect` and the
probes load the model and the version decoders (~60 ms).
"""
