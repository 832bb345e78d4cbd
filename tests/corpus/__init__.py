"""The labelled corpus of real storage-list patch mails (README.md)."""
from tests.corpus.loader import Claim, CorpusMail, load, normalized, split_of, splits

__all__ = ["Claim", "CorpusMail", "load", "normalized", "split_of", "splits"]
