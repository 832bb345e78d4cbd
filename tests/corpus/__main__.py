"""Print what the corpus holds: `python -m tests.corpus` (counts per split, list and form)."""
from collections import Counter

from tests.corpus.loader import load


def main() -> None:
    mails = load()
    print(f"{len(mails)} mails, {sum(len(m.claims) for m in mails)} claim rows, "
          f"{sum(m.negative for m in mails)} negatives (no claim rows)")
    for part in ("tune", "held_out"):
        some = [m for m in mails if m.split == part]
        print(f"  {part}: {len(some)} mails, {sum(len(m.claims) for m in some)} claim rows, "
              f"{sum(m.negative for m in some)} negatives")
    for title, counts in (("list", Counter(m.label["list"] for m in mails)),
                          ("kind", Counter(m.label["kind"] for m in mails)),
                          ("form", Counter(f for m in mails for f in m.label["forms"]))):
        print(f"per {title}:")
        for name, n in counts.most_common():
            print(f"  {n:4}  {name}")


if __name__ == "__main__":
    main()
