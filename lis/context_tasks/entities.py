"""Fictional entities for the generated contexts: kinds, attributes, names, sentences.

Every name is assembled from invented syllables and every value is drawn at random, so no
generated fact is a real-world fact a model could know. Each attribute has one sentence form
that holds its value verbatim and one keyword (``grep``-able) that appears in no other
sentence of a document, so a fact is found by its keyword and read off one line.
"""
from __future__ import annotations

import random
from dataclasses import dataclass

_ON = ("vel", "tar", "mor", "kes", "ald", "bri", "cor", "dun", "fen", "gal", "hal", "isk", "jor", "lin", "mar",
       "nor", "ost", "pel", "quin", "ros", "sel", "tov", "ul", "var", "wen", "yar", "zel", "bal", "cam", "dra")
_MID = ("", "", "", "a", "e", "i", "o", "an", "en", "ar", "il", "or")
_END = ("mora", "wick", "dale", "holm", "stead", "ford", "mere", "brook", "haven", "ton", "by", "field", "gate",
        "moor", "rith", "vale", "wyn", "ross")
_FIRST = ("Ilsa", "Teodor", "Marek", "Anneli", "Corvin", "Dalia", "Edris", "Fenna", "Goran", "Hedda", "Ivo", "Jelka",
          "Kasimir", "Liora", "Matthis", "Nerys", "Oskar", "Petra", "Quillon", "Rasmin", "Solveig", "Tobiah", "Ulla",
          "Vesna", "Wendel", "Yorick", "Zora", "Brannoc", "Celestin", "Davina")
_LAST = ("Marrow", "Quell", "Dunmore", "Ashgrove", "Pellin", "Tarrant", "Vossberg", "Lindqvist", "Oakhurst", "Renwick",
         "Sallow", "Thorne", "Ulvaeus", "Brenning", "Carrow", "Deverell", "Eckhart", "Fallon", "Grisby", "Halloran",
         "Ivers", "Jessop", "Kettering", "Lowell", "Mabry", "Norwood", "Orrin", "Prescott", "Rookwood", "Stavely")
_RIVERS = ("Tessel", "Ambra", "Corrin", "Dovel", "Esk", "Farrow", "Glenna", "Hollis", "Ilmar", "Jorra", "Kell",
           "Lune", "Marra", "Nessa", "Orrel", "Pike", "Quarry", "Rell", "Sarn", "Tamm")
_REGIONS = ("Orlan Valley", "Kesmere Coast", "Varn Uplands", "Dunholt March", "Isker Plain", "Galbrith Hills",
            "Tarrow Basin", "Selvik Reach", "Morlaine Downs", "Pellow Fens")
PRODUCTS = ("lanterns", "looms", "barometers", "clocks", "ropes", "lenses", "bells", "compasses", "kilns", "pumps")


@dataclass(frozen=True)
class Attr:
    """One attribute of an entity kind.

    ``kind`` is the value type (year, count, person, word, place); ``sentence`` states it with
    ``{name}`` and ``{value}``; ``question`` asks for it; ``phrase`` names it inside other
    questions ("the population"); ``keyword`` occurs only in this attribute's sentence.
    """
    key: str
    kind: str
    sentence: str
    question: str
    phrase: str
    keyword: str
    low: int = 0
    high: int = 0

    @property
    def numeric(self) -> bool:
        return self.kind in ("year", "count")


@dataclass(frozen=True)
class Kind:
    """An entity kind: its noun, plural, the title of a context's collection, its attributes and
    the filler sentences of its documents (no attribute keyword in them)."""
    noun: str
    plural: str
    collection: str
    attrs: tuple[Attr, ...]
    filler: tuple[str, ...]

    def attr(self, key: str) -> Attr:
        return next(a for a in self.attrs if a.key == key)


KINDS = {
    "town": Kind("town", "towns", "Towns of the {region}", (
        Attr("founded", "year", "{name} was founded in {value}.", "In which year was {name} founded?",
             "founding year", "founded", 1620, 1960),
        Attr("population", "count", "The population of {name} is {value}.", "What is the population of {name}?",
             "population", "population", 1200, 98000),
        Attr("mayor", "person", "The mayor of {name} is {value}.", "Who is the mayor of {name}?", "mayor", "mayor"),
        Attr("river", "word", "The river {value} runs through {name}.", "Which river runs through {name}?", "river",
             "river"),
        Attr("elevation", "count", "{name} lies at an elevation of {value} metres.",
             "At what elevation, in metres, does {name} lie?", "elevation in metres", "elevation", 40, 2400),
    ), ("A market is held in {name} every week.", "The old square of {name} is paved with grey stone.",
        "Visitors to {name} often walk along the quiet lanes.", "{name} is known for its spring festival.",
        "Most houses in {name} have red tiled roofs.", "A small museum in {name} shows local crafts.",
        "The people of {name} meet in the town hall for public debates.", "Orchards surround {name} on two sides.",
        "A stone bridge links the two halves of {name}.", "Trains stop at {name} twice a day.")),
    "company": Kind("company", "companies", "Firms of the {region}", (
        Attr("established", "year", "{name} was established in {value}.", "In which year was {name} established?",
             "year of establishment", "established", 1780, 2010),
        Attr("revenue", "count", "{name} reported annual revenue of {value} thousand crowns.",
             "What annual revenue, in thousand crowns, did {name} report?", "annual revenue in thousand crowns",
             "revenue", 300, 90000),
        Attr("chief", "person", "The chief executive of {name} is {value}.", "Who is the chief executive of {name}?",
             "chief executive", "executive"),
        Attr("headquarters", "place", "{name} has its headquarters in {value}.", "Where does {name} have its headquarters?",
             "headquarters", "headquarters"),
        Attr("staff", "count", "{name} employs {value} workers.", "How many workers does {name} employ?",
             "number of workers", "employs", 20, 9000),
    ), ("{name} makes {product} for customers across the region.", "The workshops of {name} open at dawn.",
        "{name} trains its apprentices for two years.", "A painted sign hangs above the main door of {name}.",
        "{name} sends its goods by cart and by barge.", "Every winter {name} holds a supper for its families.",
        "The ledgers of {name} are kept in a locked cabinet.", "{name} repairs old {product} as well as new ones.")),
    "ship": Kind("ship", "ships", "Ships of the {region} fleet", (
        Attr("launched", "year", "The {name} was launched in {value}.", "In which year was the {name} launched?",
             "launch year", "launched", 1700, 1990),
        Attr("crew", "count", "The {name} sails with a crew of {value}.", "How large is the crew of the {name}?",
             "crew", "crew", 8, 640),
        Attr("captain", "person", "The captain of the {name} is {value}.", "Who is the captain of the {name}?",
             "captain", "captain"),
        Attr("port", "place", "The home port of the {name} is {value}.", "What is the home port of the {name}?",
             "home port", "home port"),
        Attr("length", "count", "The {name} measures {value} metres from bow to stern.",
             "How many metres long is the {name}?", "length in metres", "measures", 18, 320),
    ), ("The {name} carries a spare set of sails.", "The hull of the {name} is painted dark blue.",
        "Gulls follow the {name} when it leaves the harbour.", "The {name} was refitted after a winter storm.",
        "A brass bell hangs near the wheel of the {name}.", "Sailors on the {name} keep a careful log.",
        "The {name} often waits out fog in the bay.", "Cargo on the {name} is stowed below deck.")),
    "library": Kind("library", "libraries", "Libraries of the {region}", (
        Attr("opened", "year", "{name} Library opened in {value}.", "In which year did {name} Library open?",
             "opening year", "opened", 1650, 2005),
        Attr("volumes", "count", "{name} Library holds {value} volumes.", "How many volumes does {name} Library hold?",
             "number of volumes", "volumes", 2000, 900000),
        Attr("librarian", "person", "The head librarian of {name} Library is {value}.",
             "Who is the head librarian of {name} Library?", "head librarian", "librarian"),
        Attr("city", "place", "{name} Library stands in {value}.", "In which city does {name} Library stand?",
             "city", "stands"),
        Attr("visitors", "count", "{name} Library welcomes {value} visitors a year.",
             "How many visitors a year does {name} Library welcome?", "yearly visitors", "visitors", 150, 60000),
    ), ("{name} Library has a reading garden behind it.", "The shelves of {name} Library reach the ceiling.",
        "Children gather at {name} Library for stories.", "{name} Library keeps old maps in a cool room.",
        "The lamps of {name} Library are lit at dusk.", "{name} Library lends books for three weeks.",
        "A clock above the desk of {name} Library chimes each hour.")),
}


def place_name(rng: random.Random) -> str:
    """An invented place name: ``Velmora``, ``Dunholm``, ..."""
    return (rng.choice(_ON) + rng.choice(_MID) + rng.choice(_END)).capitalize()


def person_name(rng: random.Random) -> str:
    return f"{rng.choice(_FIRST)} {rng.choice(_LAST)}"


def region_name(rng: random.Random) -> str:
    return rng.choice(_REGIONS)


def draw_value(attr: Attr, rng: random.Random) -> str:
    """A random value of ``attr`` as its sentence writes it (numbers without separators)."""
    if attr.numeric:
        return str(rng.randint(attr.low, attr.high))
    if attr.kind == "person":
        return person_name(rng)
    if attr.kind == "word":
        return rng.choice(_RIVERS)
    return place_name(rng)


def filler(kind: Kind, name: str, rng: random.Random, n: int) -> list[str]:
    """``n`` filler sentences about ``name`` (repeats only once the pool is used up)."""
    pool = list(kind.filler)
    rng.shuffle(pool)
    return [pool[i % len(pool)].format(name=name, product=rng.choice(PRODUCTS)) for i in range(n)]


@dataclass
class Entity:
    """One generated entity: its name and attribute values (as their sentences write them)."""
    kind: Kind
    name: str
    values: dict[str, str]

    def sentence(self, key: str, value: str | None = None) -> str:
        """The sentence stating attribute ``key`` (with ``value`` instead of the true one, if given)."""
        return self.kind.attr(key).sentence.format(name=self.name, value=self.values[key] if value is None else value)

    def fact(self, key: str) -> dict:
        """What the teacher needs to find and read attribute ``key``."""
        attr = self.kind.attr(key)
        return {"entity": self.name, "attribute": key, "keyword": attr.keyword, "value": self.values[key],
                "sentence": self.sentence(key)}
