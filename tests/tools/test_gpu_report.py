"""tools/gpu_report.py on the files a tools/gpu-check.sh run leaves: a whole run that passed, one
cut short by a time limit, and the failures that must turn its verdict (lines that differ
between the CPU and the GPU, GPU cases that skipped on a GPU machine, counted by case,
bfloat16 changing the int8 model), and one whose GPU steps all failed (its tables say they were
not measured). No GPU needed: the inputs are written here in the steps' own formats.

    python3 tests/tools/test_gpu_report.py        (ctest: tools.gpu_report)
"""
import json
import os
import subprocess
import sys
import tempfile
import unittest

REPORT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "tools", "gpu_report.py")


def write(d, name, text):
    with open(os.path.join(d, name), "w", encoding="utf-8") as f:
        f.write(text)


def lines(rows):
    return "".join(json.dumps(r) + "\n" for r in rows)


def whole_run(d):
    """What a run that passed every check leaves (numbers of the kind run 8 measured)."""
    write(d, "machine.txt", "gpu: NVIDIA H200, 9.0, 580.159, 143771 MiB\ndate: 2026-11-30\n"
                            "commit: 0123abc\narch: 90\nracecheck filter: --kernel-name kns=attnlite\n")
    steps = ["build", "gpu_tests", "bench_cuda", "peer_torch_cuda",
             "parity_transformer-fra-bpe_beam1", "batch_sweep", "bf16_weights", "small_work",
             "classify"]
    # the checks that time nothing, side by side at the end, in the order they finished
    side = ["c_api_cuda", "memcheck", "ctest", "racecheck", "racecheck_ops"]
    # PyTorch's exports, beside the build
    beside = ["export_lm", "export_vit"]
    write(d, "steps.jsonl", lines([{"step": s, "rc": 0, "seconds": 12.5, "beside": "build"}
                                   for s in beside]
                                  + [{"step": s, "rc": 0, "seconds": 10.5} for s in steps]
                                  + [{"step": s, "rc": 0, "seconds": 10.5, "side": True}
                                     for s in side]
                                  + [{"step": "side_by_side", "rc": 0, "seconds": 61.2}]))
    write(d, "ctest.log", "100% tests passed, 0 tests failed out of 230\n")
    write(d, "gpu_tests.log", "All tests passed (12706 assertions in 9 test cases)\n")
    write(d, "memcheck.log", "========= ERROR SUMMARY: 0 errors\n")
    write(d, "racecheck.log", "========= RACECHECK SUMMARY: 0 hazards displayed (0 errors, 0 warnings)\n")
    write(d, "racecheck_ops.log", "========= ERROR SUMMARY: 0 errors\n")
    write(d, "bench_cuda.json", json.dumps({"rows": [
        {"batch": 1, "decode_tokens_per_s": 3790.0},
        {"batch": 32, "decode_tokens_per_s": 48628.0}]}))
    write(d, "peer_torch_cuda.json", json.dumps({"torch": "2.11", "device": "NVIDIA H200", "rows": [
        {"batch": 1, "mode": "eager", "decode_tokens_per_s": 420.0},
        {"batch": 1, "mode": "graphs", "decode_tokens_per_s": 2029.0},
        {"batch": 32, "mode": "eager", "decode_tokens_per_s": 11373.0},
        {"batch": 32, "mode": "graphs", "decode_tokens_per_s": 32281.0}]}))
    write(d, "parity.jsonl", lines([
        {"model": "transformer-fra-bpe", "beam": 1, "sentences": 1896, "identical": 1896,
         "cpu_s": 7.82, "cuda_s": 0.81}]))
    # translate --times on stderr, after a warning line
    write(d, "transformer-fra-bpe.beam1.cuda.err",
          "attnlite translate: warning: sentence 7: 1 character(s) the model has never seen become <unk>\n"
          "attnlite translate: times (ms): load 30.2, set-up 250.4, first call 40.6, rest 480.0, "
          "total 801.2\n")
    write(d, "transformer-fra-bpe.beam1.cpu.err",
          "attnlite translate: times (ms): load 29.0, set-up 0.3, first call 3.1, rest 7770.6, "
          "total 7803.0\n")
    write(d, "batch.jsonl", lines([
        {"model": "transformer-fra-bpe", "batch": "32", "drop": "-", "beam": 1, "sentences": 1896,
         "identical": 1896, "cpu_s": 4.1},
        {"model": "transformer-fra-bpe", "batch": "-", "drop": "0", "beam": 1, "sentences": 1896,
         "identical": 1896, "cuda_s": 0.9},
        {"model": "transformer-fra-bpe", "batch": "32", "drop": "-", "lt": "gemv", "beam": 1,
         "sentences": 1896, "identical": 1896, "cuda_s": 0.7}]))
    write(d, "bench_cuda_gemv.json", json.dumps({"rows": [
        {"batch": 32, "decode_tokens_per_s": 50000.0}]}))
    write(d, "bench_products.json", json.dumps({"device": "NVIDIA H200", "products": [
        {"rows": 32, "product": "FFN 2", "N": 512, "K": 2048, "layers": 1, "per_step": 6,
         "us": {"0": 12.5, "1": 12.25, "3": 4.9}},
        {"rows": 32, "product": "step", "us": {"0": 400.0, "1": 398.0, "3": 199.0}}]}))
    write(d, "bf16.jsonl", lines([
        {"model": "transformer-d2l", "beam": 1, "sentences": 1896, "identical": 1882, "fp32_s": 0.5,
         "bf16_s": 0.45},
        {"model": "transformer-fra-bpe", "beam": 1, "sentences": 1896, "identical": 1896,
         "fp32_s": 0.0, "bf16_s": 0.8}]))
    # the language model and the ViT: attnlite on each device, PyTorch on the GPU (its device
    # is the GPU's name)
    write(d, "lm.jsonl", lines([
        {"peer": "attnlite", "device": dev, "gens": 8, "tok_s": t, "ids": [5, 9, 2]}
        for dev, t in (("cuda", 5000.0), ("cpu", 3000.0))]
        + [{"peer": "pytorch-cuda", "device": "NVIDIA H200", "gens": 8, "tok_s": 1000.0,
            "ids": [5, 9, 2]}]))
    write(d, "vit.jsonl", lines([
        {"peer": peer, "device": dev, "batch": b, "img_s": t, "pred": [3, 1]}
        for b, runs in ((1, (("attnlite", "cuda", 5700.0), ("attnlite", "cpu", 9300.0),
                             ("pytorch-cuda", "NVIDIA H200", 1300.0))),
                        (64, (("attnlite", "cuda", 291000.0), ("attnlite", "cpu", 9000.0),
                              ("pytorch-cuda", "NVIDIA H200", 160000.0))))
        for peer, dev, t in runs]))
    write(d, "finished.json", json.dumps({"seconds": 431}) + "\n")


def report(d):
    r = subprocess.run([sys.executable, REPORT, d], capture_output=True, text=True)
    with open(os.path.join(d, "report.md"), encoding="utf-8") as f:
        text = f.read()
    return r.returncode, text


def verdict(text):
    return text.split("## Verdict", 1)[1].strip()


class GpuReport(unittest.TestCase):
    def setUp(self):
        self.tmp = tempfile.TemporaryDirectory()
        self.d = self.tmp.name
        whole_run(self.d)

    def tearDown(self):
        self.tmp.cleanup()

    def test_a_whole_run_that_passed(self):
        rc, text = report(self.d)
        self.assertEqual(rc, 0, text)
        self.assertEqual(verdict(text), "All correctness checks passed.")
        self.assertTrue(text.startswith("# GPU check: NVIDIA H200, 2026-11-30"))
        self.assertIn("| all | | 431 |", text)  # the run's whole time, from finished.json
        self.assertIn("| build | ok | 10.5 |", text)
        self.assertIn("| racecheck | ok, side by side | 10.5 |", text)
        self.assertIn("- compute-sanitizer racecheck (kernels): 0 errors", text)
        self.assertIn("- racecheck filter: --kernel-name kns=attnlite", text)
        self.assertIn("- compute-sanitizer racecheck (model and search ops): 0 errors", text)
        self.assertIn("| side_by_side | ok | 61.2 |", text)
        self.assertIn("The steps marked \"side by side\" ran at the same time", text)
        self.assertIn("| export_vit | ok, beside the build | 12.5 |", text)
        self.assertIn("The steps marked \"beside the build\"", text)
        self.assertIn("- ctest (CPU suite and GPU cases): 230 of 230 passed", text)
        self.assertIn("all 9 passed (12706 assertions)", text)
        # batch 1: 3,790 against PyTorch's CUDA graphs' 2,029 = 1.87x, the 1.5x goal met
        self.assertIn("| 1 | 3,790 | 420 | 2,029 | 9.02x | 1.87x (met) |", text)
        self.assertIn("| transformer-fra-bpe | 1 | 1896 | 1896 | 7.82 | 0.81 | 9.65x |", text)
        # the GEMV up to 64 rows: 50,000 against 32,281 = 1.55x; in the batch sweep
        self.assertIn("| 32 (`ATTNLITE_CUDA_LT=gemv`) | 50,000 | 11,373 | 32,281 | 4.40x | 1.55x (met) |", text)
        self.assertIn("| 32 | 1 | unset | `gemv` | 1896 | 1896 | 0.70 | 11.17x | 0.81 |", text)
        # each product on its own, and a step's sum, in the three ways
        self.assertIn("| 32 | FFN 2 | 6 | 12.50 | 12.25 | 4.90 | 2.50x |", text)
        self.assertIn("| 32 | **a decoder step's products** |  | **400.0** | **398.0** | **199.0** | 2.00x |", text)
        self.assertIn("| 256 (default) | 1 | 0 (finished sentences stay) | unset | 1896 | 1896 | 0.90 |", text)
        self.assertIn("| transformer-d2l | 1 | 1896 | 1882 (99.3%) | 0.50 | 0.45 |", text)
        # --times inside the process's wall time (0.81 s on the GPU: 9 ms of start and exit)
        self.assertIn("| transformer-fra-bpe | 1 | cpu | 29 | 0 | 3 | 7771 | 17 | 7820 |", text)
        self.assertIn("| transformer-fra-bpe | 1 | cuda | 30 | 250 | 41 | 480 | 9 | 810 |", text)
        self.assertNotIn("cut short", text)
        # the goals, each as measured: the ViT's worst batch (64: 291,000 against
        # 160,000) and the split's 9.65x miss theirs, which fails nothing
        goals = text.split("## Goals", 1)[1].split("## Verdict", 1)[0]
        for row in ("| base decode at batch 1 (default mode) >= 1.5x PyTorch with CUDA graphs | 1.87x | met |",
                    "| base decode at batch 32 (default mode) >= 1.5x PyTorch with CUDA graphs | 1.51x | met |",
                    "| the default model's test split >= 10x faster on the GPU than on one CPU core | 9.65x | **missed** |",
                    "| language model tokens/s on the GPU >= 2x PyTorch on the GPU (worst setting) | 5.00x (gens 8) | met |",
                    "| ViT images/s on the GPU >= 2x PyTorch on the GPU (worst batch) | 1.82x (batch 64) | **missed** |",
                    "| held-out lines identical on the GPU and the CPU (every model and beam) | 1,896 of 1,896 | met |",
                    "| compute-sanitizer memcheck finished with 0 errors | 0 errors | met |",
                    "| compute-sanitizer racecheck (kernels) finished with 0 errors | 0 errors | met |",
                    "| compute-sanitizer racecheck (model and search ops) finished with 0 errors | 0 errors | met |"):
            self.assertIn(row, goals)

    def test_goals_a_run_did_not_reach(self):
        # racecheck cut off before its summary; no language model rows; the parity run lost a line
        write(self.d, "racecheck.log", "========= COMPUTE-SANITIZER\n")
        os.remove(os.path.join(self.d, "lm.jsonl"))
        write(self.d, "parity.jsonl", lines([
            {"model": "transformer-fra-bpe", "beam": 1, "sentences": 1896, "identical": 1895,
             "cpu_s": 9.0, "cuda_s": 0.8}]))
        rc, text = report(self.d)
        goals = text.split("## Goals", 1)[1].split("## Verdict", 1)[0]
        self.assertIn("| compute-sanitizer racecheck (kernels) finished with 0 errors | did not finish | **missed** |", goals)
        self.assertIn("| language model tokens/s on the GPU >= 2x PyTorch on the GPU (worst setting) | - | not measured |", goals)
        self.assertIn("| the default model's test split >= 10x faster on the GPU than on one CPU core | 11.25x | met |", goals)
        self.assertIn("| held-out lines identical on the GPU and the CPU (every model and beam) | 1,895 of 1,896 | **missed** |", goals)
        self.assertEqual(rc, 1, text)

    def test_a_run_cut_short_names_the_step_it_was_in(self):
        # killed by a time limit during the memcheck step: no finished.json, and the steps
        # after it left nothing
        os.remove(os.path.join(self.d, "finished.json"))
        write(self.d, "running.txt", "side_by_side (ctest, memcheck, racecheck)\n")
        with open(os.path.join(self.d, "steps.jsonl"), encoding="utf-8") as f:
            done = [l for l in f if '"build"' in l or '"ctest"' in l or '"gpu_tests"' in l]
        write(self.d, "steps.jsonl", "".join(done))
        for name in ("memcheck.log", "racecheck.log", "bench_cuda.json", "peer_torch_cuda.json",
                     "parity.jsonl", "batch.jsonl", "bf16.jsonl"):
            os.remove(os.path.join(self.d, name))
        rc, text = report(self.d)
        self.assertEqual(rc, 1, text)
        self.assertIn("**The run was cut short during step side_by_side (ctest, memcheck, "
                      "racecheck)**", text)
        self.assertIn("| ctest | ok, side by side | 10.5 |", text)
        self.assertEqual(verdict(text), "Failed: the run was cut short during step side_by_side "
                                        "(ctest, memcheck, racecheck).")
        self.assertNotIn("| all |", text)

    def test_tables_whose_steps_failed(self):
        # a GPU that every CUDA step failed to use: the CPU's runs left rows, the GPU's none
        with open(os.path.join(self.d, "steps.jsonl"), encoding="utf-8") as f:
            steps = [json.loads(l) for l in f]
        for s in steps:
            if s["step"] in ("bench_cuda", "parity_transformer-fra-bpe_beam1"):
                s["rc"] = 1
        write(self.d, "steps.jsonl", lines(steps))
        write(self.d, "bench_cuda.json", json.dumps({"rows": []}))
        for name in ("bench_cuda_gemv.json", "bench_products.json"):
            os.remove(os.path.join(self.d, name))
        write(self.d, "parity.jsonl", "")
        write(self.d, "batch.jsonl", lines([
            {"model": "transformer-fra-bpe", "batch": "32", "drop": "-", "lt": "-", "beam": 1,
             "sentences": 1896, "identical": 1896, "cpu_s": 2.99}]))
        rc, text = report(self.d)
        self.assertEqual(rc, 1, text)
        decode = text.split("## Base Transformer decode", 1)[1].split("\n## ", 1)[0]
        held = text.split("## Held-out sentences", 1)[1].split("\n## ", 1)[0]
        for part in (decode, held):
            self.assertIn("Not measured: its steps left no rows", part)
            self.assertNotIn("|---", part)  # no table of a header alone
        self.assertIn("2.99 s, 1896 of 1896 identical to one line at a time; the GPU's default "
                      "run did not finish.", held)
        self.assertIn("| base decode at batch 1 (default mode) >= 1.5x PyTorch with CUDA graphs "
                      "| - | not measured |", text)

    def test_a_run_cut_short_before_any_step_began(self):
        os.remove(os.path.join(self.d, "finished.json"))
        write(self.d, "steps.jsonl", "")
        rc, text = report(self.d)
        self.assertEqual(rc, 1, text)
        self.assertEqual(verdict(text), "Failed: the run was cut short.")

    def test_a_line_that_differs_between_the_cpu_and_the_gpu(self):
        write(self.d, "parity.jsonl", lines([
            {"model": "transformer-fra-bpe", "beam": 1, "sentences": 1896, "identical": 1895,
             "cpu_s": 7.82, "cuda_s": 0.81}]))
        rc, text = report(self.d)
        self.assertEqual(rc, 1, text)
        self.assertEqual(verdict(text), "Failed: parity transformer-fra-bpe beam 1.")

    def test_gpu_cases_that_skip_on_a_gpu_machine(self):
        write(self.d, "gpu_tests.log",
              "warning:\n  no CUDA device: checking the error only (none)\n"
              "All tests passed (40 assertions in 9 test cases)\n")
        rc, text = report(self.d)
        self.assertEqual(rc, 1, text)
        self.assertIn("9 passed (40 assertions), **1 of them only by skipping for want of a device**",
                      text)
        self.assertEqual(verdict(text), "Failed: GPU cases skipped.")

    def test_skipped_gpu_cases_count_as_cases(self):
        # Catch2's console log: a case that skips in each of its sections warns once a section
        dashes, dots = "-" * 79, "." * 79
        def warned(name, sections, n):
            head = [dashes, name] + [f"  {s}" for s in sections] + [dashes, "tests/x.cpp:1", dots, ""]
            return "\n".join(head + ["tests/cuda_checks.h:68: warning:",
                                     f"  no CUDA device: skipping the kernel tests (none {n})", "", ""])
        log = (warned("ops: keep_rows on every op set", ["cuda"], 1)
               + warned("ops: keep_rows on every op set", ["cuda", "beam"], 2)
               + warned("CUDA kernels match the scalar CPU reference", [], 3)
               + "=" * 79 + "\nAll tests passed (1533 assertions in 18 test cases)\n")
        write(self.d, "gpu_tests_lt_off.log", log)
        rc, text = report(self.d)
        self.assertEqual(rc, 1, text)
        self.assertIn("`ATTNLITE_CUDA_LT=0`): 18 passed (1533 assertions), **2 of them only by "
                      "skipping for want of a device**", text)
        self.assertEqual(verdict(text), "Failed: GPU cases, `ATTNLITE_CUDA_LT=0` skipped.")

    def test_bf16_must_leave_the_int8_model_as_it_is(self):
        write(self.d, "bf16.jsonl", lines([
            {"model": "transformer-fra-bpe", "beam": 1, "sentences": 1896, "identical": 1890,
             "fp32_s": 0.0, "bf16_s": 0.8}]))
        rc, text = report(self.d)
        self.assertEqual(rc, 1, text)
        self.assertEqual(verdict(text), "Failed: bf16 changed the int8 model's lines.")

    def test_a_failed_step_and_a_sanitizer_error(self):
        write(self.d, "steps.jsonl", lines([{"step": "build", "rc": 0, "seconds": 30.0},
                                            {"step": "memcheck", "rc": 9, "seconds": 80.0,
                                             "side": True}]))
        write(self.d, "memcheck.log", "========= ERROR SUMMARY: 2 errors\n")
        rc, text = report(self.d)
        self.assertEqual(rc, 1, text)
        self.assertIn("| memcheck | **failed** (9), side by side | 80.0 |", text)
        self.assertEqual(verdict(text), "Failed: step memcheck; memcheck.")

    def test_a_failed_export_beside_the_build(self):
        write(self.d, "steps.jsonl", lines([{"step": "export_lm", "rc": 1, "seconds": 3.0,
                                             "beside": "build"},
                                            {"step": "build", "rc": 0, "seconds": 30.0}]))
        rc, text = report(self.d)
        self.assertEqual(rc, 1, text)
        self.assertIn("| export_lm | **failed** (1), beside the build | 3.0 |", text)
        self.assertTrue(verdict(text).startswith("Failed: step export_lm"), text)


if __name__ == "__main__":
    unittest.main()
