"""The EVM rules ethread adds on top of py-evm: the forks py-evm does not have yet (Osaka and
the blob-parameter-only forks), built on its Prague VM."""
