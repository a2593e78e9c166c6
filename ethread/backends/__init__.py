"""The storage engines behind :class:`ethread.backend.Backend`: in memory, LevelDB, LMDB and
folders of Era1 archives, with the log index and record layout they share."""
