"""tools/attnlite_tools/numerals.py: which pairs name one number, how they are respelled, and
when a translation carries the digits of its English. No PyTorch needed.

    python3 tests/tools/test_numerals.py        (ctest: tools.numerals)
"""
import os
import random
import sys
import unittest

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "tools"))
from attnlite_tools import numerals  # noqa: E402


class NamesOneNumber(unittest.TestCase):
    def test_one_number_word_each_side(self):
        self.assertEqual(numerals.names_one_number("I have two children.", "J'ai deux enfants."),
                         "word")
        self.assertEqual(numerals.names_one_number("Three were wounded.", "Trois furent blessées."),
                         "word")
        self.assertEqual(numerals.names_one_number("Wait a hundred years.", "Attends cent ans."),
                         "word")

    def test_the_same_digits_each_side(self):
        self.assertEqual(numerals.names_one_number("It's 50 yen.", "C'est 50 yen."), "digits")
        self.assertEqual(numerals.names_one_number("I was born on June 4, 1974.",
                                                   "Je suis né le 4 juin 1974."), "digits")

    def test_pairs_that_do_not(self):
        cases = [
            ("Go.", "Va !"),                                    # no number
            ("I have one dog.", "J'ai un chien."),              # "one" / "un" left out
            ("I'm 25 years old.", "Je suis âgé de vingt-cinq ans."),  # digits on one side only
            ("I'm 19.", "J'ai 18 ans."),                        # other digits
            ("I have two or three.", "J'en ai deux ou trois."),  # two numbers
            ("I have two.", "J'en ai trois."),                  # other values
            ("He is twenty-five.", "Il a vingt-cinq ans."),     # parts of compounds
            ("Ten percent.", "Dix pour cent."),                 # "cent" as a second number
            ("I saw it often.", "Je l'ai vu souvent."),         # "ten" inside a word
            ("I have seventeen cats and two dogs.",             # French's compound still
             "J'ai dix-sept chats et deux chiens."),            # ... counts in English
        ]
        for en, fr in cases:
            self.assertIsNone(numerals.names_one_number(en, fr), (en, fr))


class Respell(unittest.TestCase):
    def test_word_pairs_get_the_same_digits_on_both_sides(self):
        rng = random.Random(1)
        seen = set()
        for _ in range(200):
            en, fr = numerals.respell("I have two children.", "J'ai deux enfants.", rng)
            n = numerals.digit_runs(en)
            self.assertEqual(len(n), 1)
            self.assertEqual(en, f"I have {n[0]} children.")
            self.assertEqual(fr, f"J'ai {n[0]} enfants.")
            self.assertGreaterEqual(int(n[0]), 2)
            self.assertNotEqual(n[0][0], "0")
            seen.add(len(n[0]))
        self.assertEqual(seen, {1, 2, 3, 4, 5})  # units to tens of thousands

    def test_a_capitalized_number_word(self):
        en, fr = numerals.respell("Three were wounded.", "Trois furent blessées.", random.Random(0))
        n = numerals.digit_runs(en)[0]
        self.assertEqual((en, fr), (f"{n} were wounded.", f"{n} furent blessées."))

    def test_digit_pairs_keep_each_run_in_place_and_its_length(self):
        rng = random.Random(2)
        for _ in range(100):
            en, fr = numerals.respell("I was born on June 4, 1974.", "Je suis né le 4 juin 1974.",
                                      rng)
            day, year = numerals.digit_runs(en)
            self.assertEqual((len(day), len(year)), (1, 4))
            self.assertNotEqual(year[0], "0")
            self.assertEqual(en, f"I was born on June {day}, {year}.")
            self.assertEqual(fr, f"Je suis né le {day} juin {year}.")

    def test_the_same_run_twice_gets_the_same_digits(self):
        en, fr = numerals.respell("Is it 12 or 12?", "Est-ce 12 ou 12 ?", random.Random(3))
        a, b = numerals.digit_runs(en)
        self.assertEqual(a, b)
        self.assertEqual(numerals.digit_runs(fr), [a, a])

    def test_pairs_without_one_number(self):
        self.assertIsNone(numerals.respell("Go.", "Va !", random.Random(0)))


class CarriesDigits(unittest.TestCase):
    def test_carried(self):
        self.assertTrue(numerals.carries_digits("I'm 19.", "J'ai 19 ans."))
        self.assertTrue(numerals.carries_digits("Go.", "Va !"))
        self.assertTrue(numerals.carries_digits("June 4, 1974", "le 4 juin 1974"))

    def test_not_carried(self):
        self.assertFalse(numerals.carries_digits("I'm 19.", "Je suis en 19noté."))  # glued
        self.assertFalse(numerals.carries_digits("he is 25", "Il a trois ans."))    # dropped
        self.assertFalse(numerals.carries_digits("born in 1974", "né en 194"))     # mangled
        self.assertFalse(numerals.carries_digits("at 11", "à 111111"))              # repeated
        self.assertFalse(numerals.carries_digits("at 10", "à 10 ou 10"))            # twice
        self.assertFalse(numerals.carries_digits("Go.", "Va 2 !"))                  # invented


if __name__ == "__main__":
    unittest.main()
