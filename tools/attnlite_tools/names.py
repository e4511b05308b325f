"""People's names: pairs that teach a translator to carry any name over, and a check.

The corpus names few people: Tom in 4,091 of its 74,050 pairs, Mary in 391, then John in 12.
A model trained on it carries Tom and Mary over and mangles every other name people type
("Anna is my sister." -> "Une sœur est ma sœur.", "Sarah likes cats." -> "Les chats ont les
chats."). A pair *names Tom or Mary* when the English names Tom as many times as the French
does, and Mary as many times as the French names Mary or Marie (at least one of the two,
and no Thomas for Tom). `respell` writes another man's name for Tom and another woman's for
Mary (so that "il" and "elle" still agree), the same on both sides, with the French elision
a name that starts with a vowel asks for ("de Tom" -> "d'Anton", "que Mary" -> "qu'Emma"):
with such pairs drawn anew each epoch (tools/train_subword.py --names K: K copies of each
training pair that names Tom or Mary) the model learns to carry a name over.

Half of the names training draws are real, from TRAIN_MEN and TRAIN_WOMEN; the other half
are invented (`invent`: two or three syllables, "Tiaro", "Faplia"), a new one each time.
With real names only, a model learns a class of names to choose from rather than to copy:
"Oscar won." came out "Olivier a gagné." and "Anna is my sister." "Anil est ma sœur."; an
invented name can only be copied, piece by piece. The check and the dev log draw from other
lists (HELD_MEN, HELD_WOMEN) that training never draws, and `invent` never makes, so that
they measure names the model has to copy rather than remember. None of the listed names is
an English or French word ("Will", "Rose", "Pierre" are left out), and no name starts with
an H or a Y (whether French elides before them depends on the name).

    /usr/bin/python3 tools/names.py write [--split test] [--seed 0] > FILE.tsv
    /usr/bin/python3 tools/names.py check ATTNLITE_CLI FILE.tsv [--model M] [--beam K]
        [--alpha A]

`write` prints 'english<TAB>french' for every pair of a split (as written) that names Tom or
Mary, respelled once with held-out names. `check` translates each English sentence once and
counts the translations that carry its names: each name of the lists that the English
names, as many times, spelled the same, and no other name of the lists; it prints the share
and the sentences that missed.
"""
import argparse
import collections
import re
import sys

from . import carried as _carried


def _names(text):
    return text.split()


TRAIN_MEN = _names("""
    James John Robert Michael David Richard Joseph Charles Daniel Matthew Anthony Steven
    Paul Andrew Kevin Brian George Edward Ronald Timothy Jason Jeffrey Ryan Jacob Gary Eric
    Jonathan Stephen Larry Justin Scott Brandon Benjamin Samuel Gregory Alexander Patrick
    Dennis Jerry Tyler Aaron Adam Nathan Douglas Zachary Peter Kyle Walter Ethan Jeremy
    Keith Christian Roger Noah Gerald Carl Terry Sean Austin Arthur Lawrence Jesse Dylan
    Bryan Jordan Albert Logan Ralph Eugene Wayne Louis Philip Bradley Lucas Jules Antoine
    Nicolas Julien Mathieu Olivier Laurent Thierry Sébastien François Étienne Rémi Benoît
    Luc Didier Gilles Bruno Cédric Fabien Guillaume Maxime Baptiste Théo Raphaël Gabriel
    Léo Enzo Mathis Clément Alexandre Quentin Romain Vincent Adrien Florian Carlos Juan
    Miguel Luis Diego Javier Pablo Alejandro Marco Luca Giovanni Matteo Alessandro Klaus
    Stefan Lukas Piotr Ivan Dmitri Sergei Nikolai Oleg Erik Lars Sven Anders Mohammed
    Ahmed Omar Ali Karim Mehmet Emre Reza Amir Arjun Rahul Vikram Ravi Sanjay Amit Anil
    Daiki Takeshi Kenji Sota Wei Jun Minho Tuan Kwame Kofi Chinedu Tunde Sekou Mamadou
    Moussa Oumar Abdoulaye Bilal Samir Nabil Rachid Farid Kamel Sofiane
""")
TRAIN_WOMEN = _names("""
    Anna Emma Olivia Sophia Isabella Mia Charlotte Amelia Emily Elizabeth Sarah Jessica
    Jennifer Linda Patricia Barbara Susan Karen Nancy Lisa Sandra Ashley Kimberly Donna
    Michelle Dorothy Amanda Melissa Deborah Stephanie Rebecca Laura Sharon Cynthia
    Kathleen Amy Angela Brenda Pamela Nicole Samantha Katherine Christine Rachel Catherine
    Carolyn Janet Maria Diane Julie Victoria Kelly Christina Lauren Evelyn Judith Megan
    Cheryl Andrea Martha Jacqueline Gloria Teresa Sara Madison Kathryn Janice Abigail Alice
    Camille Léa Chloé Manon Inès Louise Zoé Lucie Juliette Clara Margaux Océane Élodie
    Céline Nathalie Isabelle Sylvie Sandrine Valérie Aurélie Émilie Mathilde Pauline Anaïs
    Amandine Claire Sophie Agathe Capucine Lucía Carmen Sofía Valentina Giulia Francesca
    Chiara Elena Paola Anja Katrin Ingrid Astrid Greta Olga Natasha Irina Svetlana
    Katarzyna Agnieszka Fatima Aisha Leila Amira Nour Zeynep Elif Shirin Priya Anjali Sunita
    Deepa Kavya Lakshmi Sakura Aiko Mei Linh Amina Chiamaka Ngozi Aminata Fatou Awa Nadia
    Samira Karima Soraya Djamila
""")
HELD_MEN = _names("""
    Oscar Felix Leon Simon Victor Bastien Anton Rafael Tariq Kenta Sipho Jorge Mateo Emil
    Ibrahim Rohan Dario Tobias Gustavo Kaito Idris Florent Lionel Ulrich Wilfried Armand
    Noé Elias Goran Mustafa
""")
HELD_WOMEN = _names("""
    Clémence Ophélie Elisa Marta Ursula Noémie Irène Esther Lina Adèle Solène Roxane Naomi
    Alma Ilse Dagmar Renata Beatriz Farida Salma Keiko Sunmi Thandiwe Wanjiru Priyanka
    Ottilie Eloise Maëlle Gaëlle Odile
""")
ALL_NAMES = TRAIN_MEN + TRAIN_WOMEN + HELD_MEN + HELD_WOMEN
# Surnames after a title ("Mr. Smith" / "M. Smith"): none an English or French word.
TRAIN_SURNAMES = _names("""
    Smith Johnson Williams Jones Miller Davis Wilson Anderson Taylor Moore Jackson
    Harris Clark Lewis Walker Wright Adams Nelson Campbell Mitchell Roberts Phillips
    Evans Turner Parker Collins Edwards Stewart Morris Murphy Rogers Morgan Cooper
    Peterson Bailey Howard Richardson Watson Bennett Hughes Sanders Myers Ross Foster
    Dubois Durand Lefebvre Moreau Fournier Girard Mercier Dupont Lambert Garnier Faure
    Rousseau Roussel Perrin Morin Gauthier Dumont Masson Boyer Lemaire Duval Meunier
    Dufour Blanchard Dumas Brunet Schmitt Leroux Rolland Caron Aubert Giraud Leclerc
    Vidal Renaud Lemoine Picard Gaillard Lacroix Fabre Dupuis Guillot Lecomte Ménard
    Fleury Deschamps Carpentier Maillard Aubry Vasseur Royer Dupuy Perrot Guyot Garcia
    Martinez Lopez Gonzalez Rodriguez Fernandez Nguyen Tanaka Suzuki Yamamoto Kowalski
    Novak Schmidt Schneider Fischer Weber Becker Rossi Russo Ferrari Esposito Bianchi
    Romano Kim Chen Wang Singh Patel Kumar Okafor Mensah Diallo Traoré Keita Haddad
    Mansour Benali Yilmaz Kaya Ivanov Petrov Johansson Larsen Nielsen Ramirez Torres
    Flores Rivera Gomez Diaz Morales Ortiz Gutierrez Sato Watanabe Nakamura Kobayashi
    Wagner Hoffmann Schulz Richter Colombo Ricci Marino Greco Costa Santos Oliveira
    Pereira Almeida Kovacs Popescu Jansen Bakker Visser Hansen Jensen Eriksson Karlsson
    Nilsson
""")
HELD_SURNAMES = _names("""
    Thompson Garner Lindqvist Okonkwo Marchetti Dalton Fairbanks Kowalczyk Delacroix
    Bouchard Lemieux Takahashi Herrera Castillo Brennan Sullivan Gallagher Lindberg Novotny
    Moreno Ferreira Okoye Asante Beaulieu Chauvin Rinaldi Sorensen Vargas Whitfield Zielinski
""")
# A title and a surname for Tom or Mary (`respell` with titled > 0): the English title as
# people write it, and the French one (Mme for Mrs. and Ms., Mlle for Miss).
MEN_TITLES = (("Mr.", "M."), ("Mr.", "M."), ("Mr.", "M."), ("Mr", "M."))
WOMEN_TITLES = (("Mrs.", "Mme"), ("Mrs.", "Mme"), ("Ms.", "Mme"), ("Mrs", "Mme"), ("Ms", "Mme"),
                ("Miss", "Mlle"))
FRENCH_TITLE = dict(MEN_TITLES + WOMEN_TITLES)
_SURNAME = r"([A-Z][\w'-]*)"
TITLED_EN = re.compile(r"(?<![\w'-])(Mrs|Mr|Ms|Miss)\.? " + _SURNAME + r"(?![\w-])")
TITLED_FR = re.compile(r"(?<![\w'-])(M\.|Mme|Mlle) " + _SURNAME + r"(?![\w-])")

TOM_EN = TOM_FR = re.compile(r"(?<![\w'-])Tom(?![\w-])")
MARY_EN = re.compile(r"(?<![\w'-])Mary(?![\w-])")
MARY_FR = re.compile(r"(?<![\w'-])Mar(?:y|ie)(?![\w-])")
THOMAS = re.compile(r"\bThomas\b")
NAME_RE = re.compile(r"(?<![\w-])(" + "|".join(sorted(ALL_NAMES, key=len, reverse=True))
                     + r")(?![\w-])")
# Words that French elides before a vowel: "de Anton" is written "d'Anton".
ELIDED = re.compile(r"(?<![\w'-])(de|De|que|Que|jusque|lorsque|Lorsque|puisque|Puisque) (?=(\w+))")
VOWELS = set("AEIOUÉÈÊÀÂÎÔÛÄËÏÖÜ")


ONSETS = ("b c d f g j k l m n p r s t v z br ch dr gr kr pl sh st tr " * 2).split() + [""] * 6
NUCLEI = "a a a e e i i o o u ai ei ia io ou é".split()
CODAS = [""] * 12 + "n r s l m k t".split()


# What `invent` never makes: the names the check draws, and the corpus's own two.
NOT_INVENTED = frozenset(HELD_MEN + HELD_WOMEN + ["Tom", "Mary", "Marie"])


def invent(rng):
    """A made-up name of two or three syllables ("Tiaro", "Faplia"), capitalized, none of
    the held-out names (random.Random rng); no onset or nucleus starts with an H or a Y."""
    while True:
        name = "".join(rng.choice(ONSETS) + rng.choice(NUCLEI) + rng.choice(CODAS)
                       for _ in range(rng.choice((2, 2, 3))))
        name = name[0].upper() + name[1:]
        if len(name) >= 3 and name not in NOT_INVENTED:
            return name


def names_tom_or_mary(en, fr):
    """(Tom, Mary): how many times each is named on both sides, or None when the pair does not
    name Tom or Mary the same number of times on each side."""
    tom_en, tom_fr = len(TOM_EN.findall(en)), len(TOM_FR.findall(fr))
    mary_en, mary_fr = len(MARY_EN.findall(en)), len(MARY_FR.findall(fr))
    if tom_en != tom_fr or mary_en != mary_fr or tom_en + mary_en == 0 or THOMAS.search(fr):
        return None
    return tom_en, mary_en


def elide(fr, name):
    """`fr` with the words French elides before `name` elided there, when it starts with a
    vowel ("de Anton" -> "d'Anton", "que Emma" -> "qu'Emma")."""
    if name[0] not in VOWELS:
        return fr

    def one(m):
        if m.group(2) != name:
            return m.group(0)
        return m.group(1)[:-1] + "'"
    return ELIDED.sub(one, fr)


def titled(rng, titles, surnames, invented):
    """A title and a surname, in English and in French: ("Mr. Smith", "M. Smith"); the
    surname of `surnames` or, with probability `invented`, made up."""
    en_title, fr_title = rng.choice(titles)
    surname = invent(rng) if invented and rng.random() < invented else rng.choice(surnames)
    return f"{en_title} {surname}", f"{fr_title} {surname}"


def respell(en, fr, rng, men=TRAIN_MEN, women=TRAIN_WOMEN, invented=0.5, titled_p=0.0,
            surnames=TRAIN_SURNAMES):
    """The pair with Tom written as a man's name of `men` and Mary as a woman's of `women`
    (each, with probability `invented`, a made-up name instead), the same on both sides
    (random.Random rng), or None when it names neither as above. With probability
    `titled_p` each is a title and a surname instead ("Mr. Smith" / "M. Smith", "Mrs. Kaya" /
    "Mme Kaya": `titled`), which French never elides before."""
    if names_tom_or_mary(en, fr) is None:
        return None
    people = []
    for titles, first in ((MEN_TITLES, men), (WOMEN_TITLES, women)):
        if titled_p and rng.random() < titled_p:
            people.append(titled(rng, titles, surnames, invented))
        else:
            name = invent(rng) if invented and rng.random() < invented else rng.choice(first)
            people.append((name, name))
    (man_en, man_fr), (woman_en, woman_fr) = people
    if man_en == woman_en:
        woman_en = woman_fr = rng.choice(women)
    en = MARY_EN.sub(lambda _: woman_en, TOM_EN.sub(lambda _: man_en, en))
    fr = MARY_FR.sub(lambda _: woman_fr, TOM_FR.sub(lambda _: man_fr, fr))
    for name in (man_fr, woman_fr):
        fr = elide(fr, name)
    return en, fr


def held_out(en, fr, rng, titled_p=0.0):
    """`respell` with the names (and surnames) training never draws."""
    return respell(en, fr, rng, HELD_MEN, HELD_WOMEN, invented=0.0, titled_p=titled_p,
                   surnames=HELD_SURNAMES)


def names(text):
    """The names of the lists that `text` names, as a multiset."""
    return collections.Counter(NAME_RE.findall(text))


def titles_en(english):
    """The titled people of an English text, as French writes them: a multiset of ("M.",
    "Smith"), ("Mme", "Kaya") ..."""
    return collections.Counter((FRENCH_TITLE.get(t + ".", FRENCH_TITLE.get(t)), n)
                               for t, n in TITLED_EN.findall(english))


def titles_fr(french):
    """The titled people of a French text: a multiset of ("M.", "Smith") ..."""
    return collections.Counter(TITLED_FR.findall(french))


def carries_names(english, translation):
    """Each listed name of the English, spelled the same and as many times, and no other;
    each titled person ("Mr. Smith") as French writes them ("M. Smith"), and no other."""
    return names(english) == names(translation) and titles_en(english) == titles_fr(translation)


def carried(cli, tsv, model=None, beam=1, alpha=0.0):
    """Translates each English sentence of `tsv` ('english<TAB>french' lines) once with the
    CLI: ([(english, translation) that did not carry the names], number of sentences)."""
    return _carried.carried(carries_names, cli, tsv, model, beam, alpha)


def main():
    import random

    from .paths import DEFAULT_CORPUS
    ap = argparse.ArgumentParser(description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = ap.add_subparsers(dest="cmd", required=True)
    w = sub.add_parser("write", help="a split's pairs that name Tom or Mary, with held-out names")
    w.add_argument("corpus", nargs="?", default=DEFAULT_CORPUS)
    w.add_argument("--split", default="test", choices=["train", "dev", "test"])
    w.add_argument("--seed", type=int, default=0)
    w.add_argument("--titles", action="store_true",
                   help="every name a title and a surname training never draws (Mr. Dalton)")
    _carried.add_check(sub, "names")
    args = ap.parse_args()
    sys.stdout.reconfigure(encoding="utf-8", newline="\n")
    if args.cmd == "write":
        from . import splits  # PyTorch, for the book's preprocessing
        rng = random.Random(args.seed)
        for en, fr in splits.load_raw(args.corpus)[args.split]:
            pair = held_out(en, fr, rng, titled_p=1.0 if args.titles else 0.0)
            if pair:
                print("\t".join(pair))
        return
    _carried.check(carries_names, args, "names")
