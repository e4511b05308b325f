"""What tools/numerals.py and tools/names.py share: translate each English sentence of a
file of pairs once with the CLI, count the translations that carry over what the sentence
names (its digits, its names), and the command line of both tools' `check`."""
import subprocess


def carried(keeps, cli, tsv, model=None, beam=1, alpha=0.0):
    """Translates each English sentence of `tsv` ('english<TAB>french' lines) once with the
    CLI: ([(english, translation) for which keeps(english, translation) is false], number of
    sentences)."""
    with open(tsv, encoding="utf-8") as f:
        english = list(dict.fromkeys(line.split("\t")[0] for line in f.read().splitlines()
                                     if line))
    # each line whole, as `attnlite eval` scores a split (the figures the model files record)
    cmd = [cli, "translate", "--whole", "--beam", str(beam), "--alpha", str(alpha)]
    if model:
        cmd += ["--model", model]
    run = subprocess.run(cmd, input="\n".join(english) + "\n", capture_output=True,
                         text=True, encoding="utf-8", check=True)
    out = run.stdout.splitlines()
    if len(out) != len(english):
        raise SystemExit(f"{len(english)} sentences in, {len(out)} translations out")
    return [(e, t) for e, t in zip(english, out) if not keeps(e, t)], len(english)


def add_check(sub, what, help=None):
    """The `check` subcommand: ATTNLITE_CLI FILE.tsv [--model M] [--beam K] [--alpha A]; its
    parser, for more options."""
    c = sub.add_parser("check", help=help or f"the share of translations that carry their {what}")
    c.add_argument("cli")
    c.add_argument("tsv")
    c.add_argument("--model")
    c.add_argument("--beam", type=int, default=1)
    c.add_argument("--alpha", type=float, default=0.0)
    return c


def check(keeps, args, what):
    """Prints the sentences that missed, then the share that carried their `what` over."""
    missed, total = carried(keeps, args.cli, args.tsv, args.model, args.beam, args.alpha)
    for e, t in missed:
        print(f"missed: {e} => {t}")
    kept = total - len(missed)
    print(f"{what} carried over: {kept} of {total} ({100 * kept / total:.1f}%)")
