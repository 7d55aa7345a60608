# split_corpus.py CORPUS N TRAIN HELD: documents 0..N-1 of a doc,word,count
# corpus to TRAIN, the rest to HELD, renumbered from 0 (a deterministic split).
import sys

src, n, train, held = sys.argv[1], int(sys.argv[2]), sys.argv[3], sys.argv[4]
with open(src) as f, open(train, "w") as a, open(held, "w") as b:
    header = f.readline()
    a.write(header)
    b.write(header)
    for line in f:
        doc, word, count = line.strip().split(",")
        if int(doc) < n:
            a.write(line)
        else:
            b.write("%d,%s,%s\n" % (int(doc) - n, word, count))
