# Groups the Bernoulli rows of d.csv in threes (rows 3j..3j+2 given the inputs
# of row 3j): binomial.csv has x, trials = 3 and y = the successes;
# expanded.csv has the same as 3 Bernoulli rows each.
import csv, sys
rows = list(csv.DictReader(open(sys.argv[1])))
with open(sys.argv[2], "w") as b, open(sys.argv[3], "w") as e:
    b.write("x0,x1,x2,trials,y\n")
    e.write("x0,x1,x2,y\n")
    for j in range(0, len(rows) - 2, 3):
        x = ",".join(rows[j]["x%d" % a] for a in range(3))
        ys = [int(rows[j + t]["y"]) for t in range(3)]
        b.write("%s,3,%d\n" % (x, sum(ys)))
        for v in ys:
            e.write("%s,%d\n" % (x, v))
