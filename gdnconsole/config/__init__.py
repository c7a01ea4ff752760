"""The hosts file: hosts and launch profiles (``hosts``), writing it back (``writer``), ``--set`` edits
(``profileset``) and key positions for error messages (``tomlpos``). The lowest layer: imports nothing
else of the package."""
