"""tools/attnlite_tools/normalize.py's typing noise for training: casual (how a person might
type a sentence) and capitalize_one (one lowercase word capitalized). No PyTorch needed.

    python3 tests/tools/test_typing.py        (ctest: tools.typing)
"""
import os
import random
import sys
import unittest

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "tools"))
from attnlite_tools import normalize  # noqa: E402


class CapitalizeOne(unittest.TestCase):
    def test_one_lowercase_word_gets_a_capital_and_nothing_else_changes(self):
        text = "I saw a wonderful film, didn't you?"
        words = ["saw", "a", "wonderful", "film", "didn't", "you"]
        seen = set()
        rng = random.Random(0)
        for _ in range(300):
            out = normalize.capitalize_one(text, rng)
            self.assertEqual(out.lower(), text.lower())
            changed = [i for i, (a, b) in enumerate(zip(text, out)) if a != b]
            self.assertEqual(len(changed), 1, out)
            i = changed[0]
            self.assertTrue("a" <= text[i] <= "z" and out[i] == text[i].upper())
            self.assertTrue(i == 0 or not text[i - 1].isalnum(), out)
            seen.add(text[i:].split()[0].strip(",?"))
        self.assertEqual(seen, set(words))     # every lowercase word, in 300 draws

    def test_nothing_to_capitalize(self):
        rng = random.Random(0)
        for text in ["Run!", "TOM", "I", "", "42.", "Go, Tom."]:
            self.assertEqual(normalize.capitalize_one(text, rng), text)

    def test_not_inside_a_word(self):
        rng = random.Random(0)
        for _ in range(50):   # "nd" of "2nd", "s" after an apostrophe: never
            self.assertEqual(normalize.capitalize_one("My 2nd Tom's.", rng), "My 2nd Tom's.")


class Casual(unittest.TestCase):
    def test_forms_and_their_shares(self):
        rng = random.Random(0)
        text = "I don't know, Tom."
        forms = {}
        n = 20000
        for _ in range(n):
            out = normalize.casual(text, rng)
            forms[out] = forms.get(out, 0) + 1
        allowed = {text, "I don't know, Tom", "i don't know, tom.", "i don't know, tom",
                   "I DON'T KNOW, TOM.", "I DON'T KNOW, TOM"}
        allowed |= {s.replace("'", "") for s in allowed if s != text}
        self.assertLessEqual(set(forms), allowed)
        self.assertAlmostEqual(forms[text] / n, 0.5, delta=0.02)   # half as written
        lower = sum(c for s, c in forms.items() if s.startswith("i "))
        self.assertAlmostEqual(lower / n, 0.33, delta=0.02)        # lowercased: 0.14 + 0.19
        self.assertAlmostEqual(sum(c for s, c in forms.items() if "'" not in s) / n,
                               0.5 * 0.15, delta=0.01)             # apostrophes dropped

    def test_never_empty(self):   # dropping the final punctuation of "!" would leave nothing
        rng = random.Random(0)
        self.assertEqual({normalize.casual("!", rng) for _ in range(200)}, {"!"})


if __name__ == "__main__":
    unittest.main()
