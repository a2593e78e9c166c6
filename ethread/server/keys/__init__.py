"""API keys: the ring held in memory and their lookup (:mod:`.auth`), the key store
(:mod:`.keystore`), keeping the ring in step with it while serving (:mod:`.sync`), issuing and
revoking (:mod:`.manage`), and the bound on failed attempts per address (:mod:`.abuse`)."""
