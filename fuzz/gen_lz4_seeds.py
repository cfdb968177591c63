"""Writes the seeds of the `lz4` fuzz target into corpus/lz4: well-formed LZ4 blocks (the
block format of lz4_Block_format.md) of random sequences, each file two bytes of the decoded
size (little-endian) followed by the block. Seeded: the same files every run.
Usage: python3 gen_lz4_seeds.py   (from fuzz/)"""
import os
import random


def length_bytes(n):
    """The extra length bytes of a field of 15 or more: 255s, then the rest."""
    out = []
    while n >= 255:
        out.append(255)
        n -= 255
    out.append(n)
    return bytes(out)


def block(seqs, last):
    """An LZ4 block of `seqs` ((literals, distance, match length) each) and final `last`
    literals; returns the block and its decoded size."""
    b, size = bytearray(), 0
    for lits, dist, mlen in seqs:
        lit, m = len(lits), mlen - 4
        b.append((min(lit, 15) << 4) | min(m, 15))
        if lit >= 15:
            b += length_bytes(lit - 15)
        b += lits
        b += dist.to_bytes(2, "little")
        if m >= 15:
            b += length_bytes(m - 15)
        size += lit + mlen
    b.append(min(len(last), 15) << 4)
    if len(last) >= 15:
        b += length_bytes(len(last) - 15)
    b += last
    return bytes(b), size + len(last)


def main():
    rnd = random.Random(7)
    out_dir = os.path.join(os.path.dirname(os.path.abspath(__file__)), "corpus", "lz4")
    os.makedirs(out_dir, exist_ok=True)
    for k in range(40):
        seqs, produced = [], 0
        for _ in range(rnd.randint(1, 30)):
            lits = bytes(rnd.randrange(256) for _ in range(rnd.choice([0, 0, 1, 3, 7, 14, 15, 20])))
            produced += len(lits)
            if produced == 0:
                lits, produced = b"\x01", 1
            # distances of every class the decoder treats apart: 1-7, 8-15, 16 and more
            dist = rnd.randint(1, min(produced, rnd.choice([7, 15, 16, 64, 1000])))
            mlen = rnd.choice([4, 5, 8, 12, 18, 19, 30, 100, 300])
            seqs.append((lits, dist, mlen))
            produced += mlen
        last = bytes(rnd.randrange(256) for _ in range(rnd.choice([5, 12, 40])))
        data, size = block(seqs, last)
        with open(os.path.join(out_dir, f"seed{k:02d}"), "wb") as f:
            f.write(size.to_bytes(2, "little") + data)


if __name__ == "__main__":
    main()
