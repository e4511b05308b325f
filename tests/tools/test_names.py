"""tools/attnlite_tools/names.py: which pairs name Tom or Mary, how they are renamed (French
elision included), the name lists, and when a translation carries the names of its English.
No PyTorch needed.

    python3 tests/tools/test_names.py        (ctest: tools.names)
"""
import os
import random
import re
import sys
import unittest

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "tools"))
from attnlite_tools import names  # noqa: E402


class NamesTomOrMary(unittest.TestCase):
    def test_pairs_that_do(self):
        self.assertEqual(names.names_tom_or_mary("Tom won.", "Tom a gagné."), (1, 0))
        self.assertEqual(names.names_tom_or_mary("Tom loves Mary.", "Tom aime Marie."), (1, 1))
        self.assertEqual(names.names_tom_or_mary("Mary's here.", "Mary est ici."), (0, 1))
        self.assertEqual(names.names_tom_or_mary("Tom's dog.", "Le chien de Tom."), (1, 0))
        self.assertEqual(names.names_tom_or_mary("Tom saw Tom.", "Tom a vu Tom."), (2, 0))

    def test_pairs_that_do_not(self):
        cases = [
            ("Go.", "Va !"),                                        # nobody
            ("Tom is OK now.", "Thomas est OK maintenant."),        # Tom as Thomas
            ("Tom warned Mary.", "Tom avertit Thomas et Marie."),   # a Thomas besides
            ("Tom left.", "Il est parti."),                         # Tom not in the French
            ("Mary left.", "Elle est partie."),                     # Mary neither
            ("Tom and Tom.", "Tom."),                               # not as many times
            ("Tomorrow's no good.", "Demain ne convient pas."),     # "Tom" inside a word
            ("Tomás left.", "Tomás est parti."),
        ]
        for en, fr in cases:
            self.assertIsNone(names.names_tom_or_mary(en, fr), (en, fr))


class Respell(unittest.TestCase):
    def test_a_man_for_tom_and_a_woman_for_mary_the_same_on_both_sides(self):
        rng = random.Random(1)
        men, women = set(), set()
        for _ in range(300):
            en, fr = names.respell("Tom loves Mary.", "Tom aime Marie.", rng, invented=0.0)
            man, _, woman = en[:-1].split(" ")
            self.assertIn(man, names.TRAIN_MEN)
            self.assertIn(woman, names.TRAIN_WOMEN)
            self.assertEqual(fr, f"{man} aime {woman}.")
            men.add(man)
            women.add(woman)
        self.assertGreater(len(men), 100)  # drawn anew each time
        self.assertGreater(len(women), 90)

    def test_half_of_the_names_invented(self):
        rng = random.Random(2)
        listed = set(names.TRAIN_MEN) | set(names.TRAIN_WOMEN)
        drawn = []
        for _ in range(1000):
            en, fr = names.respell("Tom loves Mary.", "Tom aime Marie.", rng)
            man, _, woman = en[:-1].split(" ")
            self.assertEqual(fr, f"{man} aime {woman}.")
            self.assertNotEqual(man, woman)
            drawn += [man, woman]
        invented = [n for n in drawn if n not in listed]
        self.assertGreater(len(invented), 850)
        self.assertLess(len(invented), 1150)
        self.assertGreater(len(set(invented)), 0.9 * len(invented))  # a new one each time

    def test_invented_names(self):
        rng = random.Random(3)
        held = set(names.HELD_MEN) | set(names.HELD_WOMEN) | {"Tom", "Mary", "Marie"}
        made = [names.invent(rng) for _ in range(5000)]
        for n in made:
            self.assertRegex(n, r"^[A-GI-XZÉ][a-zé]{2,}$")
            self.assertNotIn(n, held)
        self.assertGreater(sum(n[0] in names.VOWELS for n in made), 250)  # some elide

    def test_every_occurrence_and_the_possessive(self):
        en, fr = names.respell("Tom saw Tom's dog.", "Tom a vu le chien de Tom.", random.Random(4))
        man = en.split(" ")[0]
        self.assertEqual(en, f"{man} saw {man}'s dog.")
        self.assertTrue(fr.startswith(f"{man} a vu le chien d"), fr)
        self.assertTrue(fr.endswith(f"{man}."), fr)

    def test_french_elides_before_a_vowel(self):
        self.assertEqual(names.elide("Nous avons besoin de Anton.", "Anton"),
                         "Nous avons besoin d'Anton.")
        self.assertEqual(names.elide("Est-ce que Emma va bien ?", "Emma"),
                         "Est-ce qu'Emma va bien ?")
        self.assertEqual(names.elide("De Élodie, je ne sais rien.", "Élodie"),
                         "D'Élodie, je ne sais rien.")
        self.assertEqual(names.elide("Attends jusque Oscar arrive.", "Oscar"),
                         "Attends jusqu'Oscar arrive.")
        # a consonant, another word after "de", or "de" inside a word: as written
        self.assertEqual(names.elide("Le chien de Lukas.", "Lukas"), "Le chien de Lukas.")
        self.assertEqual(names.elide("Plus de eau que Emma.", "Emma"), "Plus de eau qu'Emma.")
        self.assertEqual(names.elide("Il vide Emma.", "Emma"), "Il vide Emma.")

    def test_respell_elides(self):
        rng = random.Random(0)
        seen = set()
        for _ in range(400):
            en, fr = names.respell("We need Tom.", "Nous avons besoin de Tom.", rng)
            man = en[len("We need "):-1]
            want = f"d'{man}" if man[0] in "AEIOUÉ" else f"de {man}"
            self.assertEqual(fr, f"Nous avons besoin {want}.")
            seen.add(want[:2])
        self.assertEqual(seen, {"d'", "de"})

    def test_held_out_names_only(self):
        rng = random.Random(5)
        for _ in range(100):
            en, fr = names.held_out("Tom loves Mary.", "Tom aime Mary.", rng)
            man, _, woman = en[:-1].split(" ")
            self.assertIn(man, names.HELD_MEN)
            self.assertIn(woman, names.HELD_WOMEN)

    def test_held_out_draws_two_names_and_nothing_else(self):
        # `write` makes the same models/*.names.tsv from the same seed: held-out names cost
        # one draw each, none to decide whether to invent.
        rng, ref = random.Random(7), random.Random(7)
        for _ in range(20):
            en, _ = names.held_out("Tom loves Mary.", "Tom aime Mary.", rng)
            self.assertEqual(en, f"{ref.choice(names.HELD_MEN)} loves "
                                 f"{ref.choice(names.HELD_WOMEN)}.")

    def test_pairs_that_name_neither(self):
        self.assertIsNone(names.respell("Go.", "Va !", random.Random(0)))

    def test_titles_and_surnames(self):
        rng = random.Random(8)
        seen = set()
        for _ in range(400):
            en, fr = names.respell("Tom loves Mary.", "Tom aime Marie.", rng, invented=0.0,
                                   titled_p=1.0)
            m = re.fullmatch(r"(Mr\.?) (\w+) loves (Mrs\.?|Ms\.?|Miss) (\w+)\.", en)
            self.assertIsNotNone(m, en)
            man_title, man, woman_title, woman = m.groups()
            self.assertIn(man, names.TRAIN_SURNAMES)
            self.assertIn(woman, names.TRAIN_SURNAMES)
            fr_woman = "Mlle" if woman_title == "Miss" else "Mme"
            self.assertEqual(fr, f"M. {man} aime {fr_woman} {woman}.")
            seen |= {man_title, woman_title}
        self.assertEqual(seen, {"Mr.", "Mr", "Mrs.", "Mrs", "Ms.", "Ms", "Miss"})

    def test_no_elision_before_a_title(self):
        rng = random.Random(9)
        for _ in range(200):
            en, fr = names.respell("We need Tom.", "Nous avons besoin de Tom.", rng, titled_p=1.0)
            self.assertTrue(fr.startswith("Nous avons besoin de M. "), (en, fr))

    def test_some_titled(self):
        rng = random.Random(10)
        pairs = [names.respell("Tom won.", "Tom a gagné.", rng, titled_p=0.25) for _ in range(2000)]
        titled = sum(fr.startswith("M. ") for _, fr in pairs)
        self.assertGreater(titled, 400)
        self.assertLess(titled, 600)

    def test_no_titles_draws_as_before(self):
        # titled_p 0 (the default) draws nothing more: the same pairs as without titles
        a, b = random.Random(11), random.Random(11)
        for _ in range(50):
            self.assertEqual(names.respell("Tom loves Mary.", "Tom aime Marie.", a),
                             names.respell("Tom loves Mary.", "Tom aime Marie.", b, titled_p=0.0))

    def test_held_out_titles(self):
        rng = random.Random(12)
        for _ in range(100):
            en, fr = names.held_out("Tom won.", "Tom a gagné.", rng, titled_p=1.0)
            surname = en.split(" ")[1]
            self.assertIn(surname, names.HELD_SURNAMES)
            self.assertEqual(fr, f"M. {surname} a gagné.")


class Lists(unittest.TestCase):
    def test_disjoint_and_distinct(self):
        lists = [names.TRAIN_MEN, names.TRAIN_WOMEN, names.HELD_MEN, names.HELD_WOMEN]
        every = [n for lst in lists for n in lst]
        self.assertEqual(len(every), len(set(every)))
        self.assertNotIn("Tom", every)
        self.assertNotIn("Mary", every)
        self.assertNotIn("Marie", every)

    def test_names_only(self):
        for n in names.ALL_NAMES:
            self.assertRegex(n, r"^[A-ZÉ][a-zéèëêïîíàâçôöüúñ]+$")
            self.assertNotIn(n[0], "HY")  # French elides before some of them, not others

    def test_surnames(self):
        every = names.TRAIN_SURNAMES + names.HELD_SURNAMES
        self.assertEqual(len(every), len(set(every)))
        self.assertFalse(set(every) & set(names.ALL_NAMES))
        for n in every:
            self.assertRegex(n, r"^[A-Z][a-zéèëêïîíàâçôöüúñ]+$")
        self.assertGreaterEqual(len(names.TRAIN_SURNAMES), 150)
        self.assertGreaterEqual(len(names.HELD_SURNAMES), 30)

    def test_training_and_the_check_draw_from_many(self):
        self.assertGreaterEqual(len(names.TRAIN_MEN), 150)
        self.assertGreaterEqual(len(names.TRAIN_WOMEN), 140)
        self.assertGreaterEqual(len(names.HELD_MEN), 30)
        self.assertGreaterEqual(len(names.HELD_WOMEN), 30)


class CarriesNames(unittest.TestCase):
    def test_carried(self):
        self.assertTrue(names.carries_names("Anna is my sister.", "Anna est ma sœur."))
        self.assertTrue(names.carries_names("We need Oscar.", "Nous avons besoin d'Oscar."))
        self.assertTrue(names.carries_names("Go.", "Va !"))
        self.assertTrue(names.carries_names("Elias saw Elias.", "Elias a vu Elias."))

    def test_not_carried(self):
        self.assertFalse(names.carries_names("Anna is my sister.", "Une sœur est ma sœur."))
        self.assertFalse(names.carries_names("Where is Mateo?", "Où est Mo ?"))       # mangled
        self.assertFalse(names.carries_names("Emil left.", "Emile est parti."))       # respelled
        self.assertFalse(names.carries_names("Emil left.", "emil est parti."))        # case
        self.assertFalse(names.carries_names("Elias saw Elias.", "Elias l'a vu."))    # once
        self.assertFalse(names.carries_names("Emil left.", "Oscar est parti."))       # another
        self.assertFalse(names.carries_names("Go.", "Va, Anna !"))                    # invented

    def test_titled_people(self):
        self.assertTrue(names.carries_names("Mr. Dalton is here.", "M. Dalton est ici."))
        self.assertTrue(names.carries_names("Mr Dalton met Ms. Okoye.",
                                            "M. Dalton a rencontré Mme Okoye."))
        self.assertTrue(names.carries_names("Miss Vargas left.", "Mlle Vargas est partie."))
        self.assertFalse(names.carries_names("Mr. Dalton is here.", "Mère est ici."))
        self.assertFalse(names.carries_names("Mr. Dalton is here.", "Dalton est ici."))   # no title
        self.assertFalse(names.carries_names("Mr. Dalton is here.", "Mme Dalton est ici."))
        self.assertFalse(names.carries_names("Mrs. Okoye won.", "M. Okoye a gagné."))
        self.assertFalse(names.carries_names("Go.", "Va, M. Dalton !"))                # invented


if __name__ == "__main__":
    unittest.main()
