"""Every file a command or an engine writes, and how: a file replaced whole at the end or standard
output (:mod:`.files`), each format's escaping of a field (:mod:`.escape`), and tables of named columns
(:mod:`.tables`). Stages write through here; nothing here knows a stage."""
