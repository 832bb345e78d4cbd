"""The labelled corpus of real storage-list patch mails (README.md)."""
from tests.corpus.loader import Claim, CorpusMail, load, normalized, part_of, splits, tuned_on

__all__ = ["Claim", "CorpusMail", "load", "normalized", "part_of", "splits",
           "tuned_on"]
