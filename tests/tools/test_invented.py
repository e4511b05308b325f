"""tools/attnlite_tools/invented.py: the words of a text, the corpus's French lexicon, and which
words of a translation are its own. No PyTorch needed.

    python3 tests/tools/test_invented.py        (ctest: tools.invented)
"""
import os
import sys
import tempfile
import unittest

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "tools"))
from attnlite_tools import invented  # noqa: E402


class Words(unittest.TestCase):
    def test_runs_of_letters(self):
        self.assertEqual(invented.words("Aujourd'hui, j'ai 19 ans !"),
                         ["Aujourd", "hui", "j", "ai", "ans"])
        self.assertEqual(invented.words("Où est-ce ? Ça\u202fva."), ["Où", "est", "ce", "Ça", "va"])
        self.assertEqual(invented.words("snake_case 3D"), ["snake", "case", "D"])
        self.assertEqual(invented.words("... 42 !"), [])


class Lexicon(unittest.TestCase):
    def test_the_french_side_only(self):
        with tempfile.NamedTemporaryFile("w", suffix=".txt", encoding="utf-8",
                                         delete=False) as f:
            f.write("Go.\tVa !\tCC-BY 2.0 (France) Attribution\n"
                    "I smell bacon.\tJe sens le bacon.\n"
                    "a line without a tab\n")
        try:
            lex = invented.lexicon(f.name)
        finally:
            os.unlink(f.name)
        self.assertEqual(lex, {"va", "je", "sens", "le", "bacon"})


class Invented(unittest.TestCase):
    LEX = frozenset({"je", "sens", "le", "bacon", "est", "ma", "sœur", "cours", "il", "a",
                     "ans"})  # as lexicon() gives it: lowercased

    def test_own_words(self):
        self.assertEqual(invented.invented("I smell bacon.", "Je sens le co.", self.LEX), ["co"])
        self.assertEqual(invented.invented("Run!", "Rouis !", self.LEX), ["Rouis"])
        self.assertEqual(invented.invented("Run!", "Cours Coursez Coursez !", self.LEX),
                         ["Coursez", "Coursez"])

    def test_words_of_the_corpus_or_of_the_english_are_not(self):
        self.assertEqual(invented.invented("Anna is my sister.", "Anna est ma sœur.", self.LEX),
                         [])
        self.assertEqual(invented.invented("He is 25.", "Il a 25 ans.", self.LEX), [])
        self.assertEqual(invented.invented("Run!", "Cours !", self.LEX), [])
        # case aside: a name typed in lowercase and capitalized, a word of the corpus
        # capitalized or not
        self.assertEqual(invented.invented("anna is my sister", "Anna est ma sœur.", self.LEX),
                         [])
        self.assertEqual(invented.invented("Run!", "COURS !", self.LEX), [])
        self.assertEqual(invented.invented("He's 25.", "Il A 25 Ans.", self.LEX), [])


if __name__ == "__main__":
    unittest.main()
