"""Fact tables written for the demo questions (the project's own wording; common knowledge only).

Each row pairs Portuguese and English text. Where a table row lists wrong answers, they are
wrong for that row's question; the templates in :mod:`demo.questions` pick the options.
"""

from __future__ import annotations

# ------------------------------------------------------------------ Natural sciences (CN)
# (name pt, name en, symbol)
ELEMENTS: tuple[tuple[str, str, str], ...] = (
    ("hidrogênio", "hydrogen", "H"),
    ("hélio", "helium", "He"),
    ("carbono", "carbon", "C"),
    ("nitrogênio", "nitrogen", "N"),
    ("oxigênio", "oxygen", "O"),
    ("flúor", "fluorine", "F"),
    ("sódio", "sodium", "Na"),
    ("magnésio", "magnesium", "Mg"),
    ("alumínio", "aluminium", "Al"),
    ("silício", "silicon", "Si"),
    ("fósforo", "phosphorus", "P"),
    ("enxofre", "sulfur", "S"),
    ("cloro", "chlorine", "Cl"),
    ("potássio", "potassium", "K"),
    ("cálcio", "calcium", "Ca"),
    ("ferro", "iron", "Fe"),
    ("cobre", "copper", "Cu"),
    ("zinco", "zinc", "Zn"),
    ("prata", "silver", "Ag"),
    ("estanho", "tin", "Sn"),
    ("iodo", "iodine", "I"),
    ("ouro", "gold", "Au"),
    ("mercúrio", "mercury", "Hg"),
    ("chumbo", "lead", "Pb"),
)

ATOMIC_MASS: dict[str, float] = {
    "H": 1.0,
    "C": 12.0,
    "N": 14.0,
    "O": 16.0,
    "Na": 23.0,
    "Mg": 24.0,
    "S": 32.0,
    "Cl": 35.5,
    "K": 39.0,
    "Ca": 40.0,
}
"""Rounded molar masses (g/mol) given in the question stems."""

# (name pt, name en, formula text, atom counts)
MOLECULES: tuple[tuple[str, str, str, dict[str, int]], ...] = (
    ("água", "water", "H2O", {"H": 2, "O": 1}),
    ("gás carbônico", "carbon dioxide", "CO2", {"C": 1, "O": 2}),
    ("amônia", "ammonia", "NH3", {"N": 1, "H": 3}),
    ("metano", "methane", "CH4", {"C": 1, "H": 4}),
    ("cloreto de sódio", "sodium chloride", "NaCl", {"Na": 1, "Cl": 1}),
    ("ácido sulfúrico", "sulfuric acid", "H2SO4", {"H": 2, "S": 1, "O": 4}),
    ("carbonato de cálcio", "calcium carbonate", "CaCO3", {"Ca": 1, "C": 1, "O": 3}),
    ("glicose", "glucose", "C6H12O6", {"C": 6, "H": 12, "O": 6}),
    ("ácido clorídrico", "hydrochloric acid", "HCl", {"H": 1, "Cl": 1}),
    ("hidróxido de sódio", "sodium hydroxide", "NaOH", {"Na": 1, "O": 1, "H": 1}),
    ("óxido de magnésio", "magnesium oxide", "MgO", {"Mg": 1, "O": 1}),
    ("cloreto de potássio", "potassium chloride", "KCl", {"K": 1, "Cl": 1}),
    ("etanol", "ethanol", "C2H6O", {"C": 2, "H": 6, "O": 1}),
    ("gás oxigênio", "oxygen gas", "O2", {"O": 2}),
)

PLANETS_PT: tuple[str, ...] = (
    "Mercúrio",
    "Vênus",
    "Terra",
    "Marte",
    "Júpiter",
    "Saturno",
    "Urano",
    "Netuno",
)
PLANETS_EN: tuple[str, ...] = (
    "Mercury",
    "Venus",
    "Earth",
    "Mars",
    "Jupiter",
    "Saturn",
    "Uranus",
    "Neptune",
)
ORDINALS_PT: tuple[str, ...] = (
    "primeiro",
    "segundo",
    "terceiro",
    "quarto",
    "quinto",
    "sexto",
    "sétimo",
    "oitavo",
)
ORDINALS_EN: tuple[str, ...] = (
    "first",
    "second",
    "third",
    "fourth",
    "fifth",
    "sixth",
    "seventh",
    "eighth",
)

# (function pt, function en, organelle pt, organelle en)
ORGANELLES: tuple[tuple[str, str, str, str], ...] = (
    (
        "a respiração celular, que fornece a maior parte do ATP",
        "cellular respiration, which supplies most of the ATP",
        "mitocôndria",
        "mitochondrion",
    ),
    ("a síntese de proteínas", "protein synthesis", "ribossomo", "ribosome"),
    ("a fotossíntese", "photosynthesis", "cloroplasto", "chloroplast"),
    ("a digestão intracelular", "intracellular digestion", "lisossomo", "lysosome"),
    (
        "a modificação, o empacotamento e a secreção de proteínas",
        "modifying, packaging and secreting proteins",
        "complexo golgiense",
        "Golgi apparatus",
    ),
    (
        "o armazenamento da maior parte do material genético de uma célula eucariótica",
        "storing most of the genetic material of a eukaryotic cell",
        "núcleo",
        "nucleus",
    ),
    (
        "o controle da entrada e da saída de substâncias da célula",
        "controlling what enters and leaves the cell",
        "membrana plasmática",
        "plasma membrane",
    ),
)

# (stem pt, stem en, [correct pt, 4 wrong pt], [correct en, 4 wrong en])
SCIENCE_FACTS: tuple[tuple[str, str, tuple[str, ...], tuple[str, ...]], ...] = (
    (
        "Qual é, aproximadamente, a velocidade da luz no vácuo?",
        "What is, approximately, the speed of light in a vacuum?",
        ("300.000 km/s", "300.000 m/s", "340 m/s", "3.000 km/s", "30 km/s"),
        ("300,000 km/s", "300,000 m/s", "340 m/s", "3,000 km/s", "30 km/s"),
    ),
    (
        "Qual é, aproximadamente, a aceleração da gravidade na superfície da Terra?",
        "What is, approximately, the acceleration due to gravity at the Earth's surface?",
        ("9,8 m/s²", "1,6 m/s²", "98 m/s²", "0,98 m/s²", "3,0 m/s²"),
        ("9.8 m/s²", "1.6 m/s²", "98 m/s²", "0.98 m/s²", "3.0 m/s²"),
    ),
    (
        "A que temperatura a água pura ferve ao nível do mar?",
        "At what temperature does pure water boil at sea level?",
        ("100 °C", "0 °C", "37 °C", "212 °C", "80 °C"),
        ("100 °C", "0 °C", "37 °C", "212 °C", "80 °C"),
    ),
    (
        "A que temperatura o gelo de água pura derrete ao nível do mar?",
        "At what temperature does pure water ice melt at sea level?",
        ("0 °C", "100 °C", "4 °C", "-10 °C", "32 °C"),
        ("0 °C", "100 °C", "4 °C", "-10 °C", "32 °C"),
    ),
    (
        "Qual é o pH de uma solução neutra a 25 °C?",
        "What is the pH of a neutral solution at 25 °C?",
        ("7", "0", "1", "10", "14"),
        ("7", "0", "1", "10", "14"),
    ),
    (
        "Quantos cromossomos há em uma célula somática humana típica?",
        "How many chromosomes are there in a typical human somatic cell?",
        ("46", "23", "44", "48", "92"),
        ("46", "23", "44", "48", "92"),
    ),
    (
        "Qual é, aproximadamente, a velocidade do som no ar à temperatura ambiente?",
        "What is, approximately, the speed of sound in air at room temperature?",
        ("340 m/s", "34 m/s", "3.400 km/s", "300.000 km/s", "15 m/s"),
        ("340 m/s", "34 m/s", "3,400 km/s", "300,000 km/s", "15 m/s"),
    ),
    (
        "Qual é o maior planeta do Sistema Solar?",
        "Which is the largest planet of the Solar System?",
        ("Júpiter", "Saturno", "Terra", "Netuno", "Marte"),
        ("Jupiter", "Saturn", "Earth", "Neptune", "Mars"),
    ),
    (
        "Qual gás as plantas absorvem do ar para realizar a fotossíntese?",
        "Which gas do plants take from the air to carry out photosynthesis?",
        (
            "gás carbônico (CO2)",
            "oxigênio (O2)",
            "nitrogênio (N2)",
            "hidrogênio (H2)",
            "hélio (He)",
        ),
        ("carbon dioxide (CO2)", "oxygen (O2)", "nitrogen (N2)", "hydrogen (H2)", "helium (He)"),
    ),
    (
        "Quais células do sangue transportam a maior parte do oxigênio?",
        "Which blood cells carry most of the oxygen?",
        ("hemácias", "leucócitos", "plaquetas", "neurônios", "células adiposas"),
        ("red blood cells", "white blood cells", "platelets", "neurons", "fat cells"),
    ),
    (
        "Qual é a unidade de força no Sistema Internacional?",
        "What is the SI unit of force?",
        ("newton", "joule", "watt", "pascal", "coulomb"),
        ("newton", "joule", "watt", "pascal", "coulomb"),
    ),
    (
        "Qual é a unidade de energia no Sistema Internacional?",
        "What is the SI unit of energy?",
        ("joule", "newton", "watt", "volt", "ampere"),
        ("joule", "newton", "watt", "volt", "ampere"),
    ),
)

# ------------------------------------------------------------------ Humanities (CH)
# UF -> (state name, the name with its Portuguese preposition/article, region index into REGIONS_*);
# capitals come from demo.geography.
STATE_NAMES: dict[str, tuple[str, str, int]] = {
    "RO": ("Rondônia", "de Rondônia", 0),
    "AC": ("Acre", "do Acre", 0),
    "AM": ("Amazonas", "do Amazonas", 0),
    "RR": ("Roraima", "de Roraima", 0),
    "PA": ("Pará", "do Pará", 0),
    "AP": ("Amapá", "do Amapá", 0),
    "TO": ("Tocantins", "do Tocantins", 0),
    "MA": ("Maranhão", "do Maranhão", 1),
    "PI": ("Piauí", "do Piauí", 1),
    "CE": ("Ceará", "do Ceará", 1),
    "RN": ("Rio Grande do Norte", "do Rio Grande do Norte", 1),
    "PB": ("Paraíba", "da Paraíba", 1),
    "PE": ("Pernambuco", "de Pernambuco", 1),
    "AL": ("Alagoas", "de Alagoas", 1),
    "SE": ("Sergipe", "de Sergipe", 1),
    "BA": ("Bahia", "da Bahia", 1),
    "MG": ("Minas Gerais", "de Minas Gerais", 3),
    "ES": ("Espírito Santo", "do Espírito Santo", 3),
    "RJ": ("Rio de Janeiro", "do Rio de Janeiro", 3),
    "SP": ("São Paulo", "de São Paulo", 3),
    "PR": ("Paraná", "do Paraná", 4),
    "SC": ("Santa Catarina", "de Santa Catarina", 4),
    "RS": ("Rio Grande do Sul", "do Rio Grande do Sul", 4),
    "MS": ("Mato Grosso do Sul", "de Mato Grosso do Sul", 2),
    "MT": ("Mato Grosso", "de Mato Grosso", 2),
    "GO": ("Goiás", "de Goiás", 2),
}
REGIONS_PT: tuple[str, ...] = ("Norte", "Nordeste", "Centro-Oeste", "Sudeste", "Sul")
REGIONS_EN: tuple[str, ...] = ("North", "Northeast", "Centre-West", "Southeast", "South")

# (event pt, event en, year)
EVENTS: tuple[tuple[str, str, int], ...] = (
    (
        "a tomada de Constantinopla pelos otomanos",
        "the capture of Constantinople by the Ottomans",
        1453,
    ),
    (
        "a chegada da frota de Pedro Álvares Cabral ao litoral do atual Brasil",
        "the arrival of Pedro Álvares Cabral's fleet on the coast of present-day Brazil",
        1500,
    ),
    (
        "a fundação do colégio jesuíta que deu origem à cidade de São Paulo",
        "the founding of the Jesuit college that gave rise to the city of São Paulo",
        1554,
    ),
    (
        "a Declaração de Independência dos Estados Unidos",
        "the United States Declaration of Independence",
        1776,
    ),
    (
        "a tomada da Bastilha, na Revolução Francesa",
        "the storming of the Bastille in the French Revolution",
        1789,
    ),
    (
        "a transferência da corte portuguesa para o Rio de Janeiro",
        "the transfer of the Portuguese court to Rio de Janeiro",
        1808,
    ),
    ("a Independência do Brasil", "the Independence of Brazil", 1822),
    (
        "a assinatura da Lei Áurea, que aboliu a escravidão no Brasil",
        "the signing of the Golden Law, which abolished slavery in Brazil",
        1888,
    ),
    ("a Proclamação da República no Brasil", "the Proclamation of the Republic in Brazil", 1889),
    ("o início da Primeira Guerra Mundial", "the start of the First World War", 1914),
    ("a Revolução Russa", "the Russian Revolution", 1917),
    ("a Semana de Arte Moderna em São Paulo", "the Modern Art Week in São Paulo", 1922),
    (
        "o início do Estado Novo de Getúlio Vargas",
        "the start of Getúlio Vargas's Estado Novo",
        1937,
    ),
    ("o fim da Segunda Guerra Mundial", "the end of the Second World War", 1945),
    ("a inauguração de Brasília", "the inauguration of Brasília", 1960),
    (
        "a primeira chegada de astronautas à superfície da Lua",
        "the first crewed landing on the Moon",
        1969,
    ),
    (
        "a promulgação da Constituição Federal brasileira em vigor",
        "the enactment of the current Brazilian Federal Constitution",
        1988,
    ),
    ("a queda do Muro de Berlim", "the fall of the Berlin Wall", 1989),
)

CONTINENTS_PT: tuple[str, ...] = ("África", "América", "Ásia", "Europa", "Oceania")
CONTINENTS_EN: tuple[str, ...] = ("Africa", "America", "Asia", "Europe", "Oceania")
# (country pt, country en, continent index)
COUNTRIES: tuple[tuple[str, str, int], ...] = (
    ("Angola", "Angola", 0),
    ("Moçambique", "Mozambique", 0),
    ("Senegal", "Senegal", 0),
    ("Nigéria", "Nigeria", 0),
    ("Quênia", "Kenya", 0),
    ("Japão", "Japan", 2),
    ("Índia", "India", 2),
    ("Vietnã", "Vietnam", 2),
    ("Tailândia", "Thailand", 2),
    ("Portugal", "Portugal", 3),
    ("Noruega", "Norway", 3),
    ("Polônia", "Poland", 3),
    ("Irlanda", "Ireland", 3),
    ("Chile", "Chile", 1),
    ("México", "Mexico", 1),
    ("Canadá", "Canada", 1),
    ("Peru", "Peru", 1),
    ("Austrália", "Australia", 4),
    ("Nova Zelândia", "New Zealand", 4),
    ("Fiji", "Fiji", 4),
)

# (city pt, city en, standard UTC offset in hours)
TIME_ZONES: tuple[tuple[str, str, int], ...] = (
    ("Lisboa", "Lisbon", 0),
    ("Londres", "London", 0),
    ("Tóquio", "Tokyo", 9),
    ("Nova York", "New York", -5),
    ("Moscou", "Moscow", 3),
    ("Manaus", "Manaus", -4),
    ("Pequim", "Beijing", 8),
    ("Cidade do Cabo", "Cape Town", 2),
    ("Rio Branco", "Rio Branco", -5),
)

# ------------------------------------------------------------------ Languages (LC)
# Synonym in context: (sentence, word, correct, 4 wrong) — all Portuguese.
SYNONYMS: tuple[tuple[str, str, str, tuple[str, ...]], ...] = (
    (
        "Depois da longa caminhada, os turistas estavam exaustos.",
        "exaustos",
        "cansados",
        ("animados", "perdidos", "assustados", "atrasados"),
    ),
    (
        "A professora elogiou a resposta perspicaz do aluno.",
        "perspicaz",
        "sagaz",
        ("demorada", "confusa", "barulhenta", "tímida"),
    ),
    (
        "O prefeito prometeu uma solução célere para o problema das enchentes.",
        "célere",
        "rápida",
        ("cara", "definitiva", "secreta", "antiga"),
    ),
    (
        "A vizinha é uma pessoa muito afável com as crianças.",
        "afável",
        "gentil",
        ("severa", "distraída", "rica", "alta"),
    ),
    (
        "A notícia da vitória causou grande júbilo na cidade.",
        "júbilo",
        "alegria",
        ("tristeza", "confusão", "silêncio", "medo"),
    ),
    (
        "Foi uma decisão sensata esperar a chuva passar.",
        "sensata",
        "prudente",
        ("apressada", "arriscada", "injusta", "engraçada"),
    ),
    (
        "Os moradores ficaram apreensivos com o barulho da tempestade.",
        "apreensivos",
        "preocupados",
        ("felizes", "entediados", "surdos", "sonolentos"),
    ),
    (
        "A herança foi dividida de forma equitativa entre os irmãos.",
        "equitativa",
        "justa",
        ("secreta", "apressada", "desigual", "ilegal"),
    ),
    (
        "O guia fez uma descrição minuciosa do castelo.",
        "minuciosa",
        "detalhada",
        ("rápida", "falsa", "engraçada", "pequena"),
    ),
    (
        "O bairro ficou ermo depois que a fábrica fechou.",
        "ermo",
        "deserto",
        ("barulhento", "poluído", "valorizado", "iluminado"),
    ),
    (
        "O cientista refutou a hipótese com novos dados.",
        "refutou",
        "contestou",
        ("confirmou", "publicou", "copiou", "esqueceu"),
    ),
    (
        "Os convidados chegaram em profusão à festa.",
        "em profusão",
        "em grande quantidade",
        ("em silêncio", "atrasados", "um de cada vez", "de mãos vazias"),
    ),
    (
        "O diretor adotou uma postura austera diante da crise.",
        "austera",
        "rígida",
        ("alegre", "descuidada", "generosa", "confusa"),
    ),
    (
        "A atleta ficou exultante com a medalha de ouro.",
        "exultante",
        "muito contente",
        ("indiferente", "envergonhada", "machucada", "cansada"),
    ),
    (
        "O treinador fez uma crítica contundente ao time.",
        "contundente",
        "incisiva",
        ("suave", "engraçada", "demorada", "confusa"),
    ),
    (
        "A biblioteca tem um acervo vasto de mapas antigos.",
        "vasto",
        "amplo",
        ("pequeno", "caro", "danificado", "escondido"),
    ),
)

# Antonym in context: (sentence, word, correct antonym, 4 wrong).
ANTONYMS: tuple[tuple[str, str, str, tuple[str, ...]], ...] = (
    (
        "O rio estava cheio depois das chuvas.",
        "cheio",
        "vazio",
        ("largo", "limpo", "calmo", "fundo"),
    ),
    (
        "O quarto ficou escuro quando a luz acabou.",
        "escuro",
        "claro",
        ("frio", "pequeno", "silencioso", "sujo"),
    ),
    (
        "Ele sempre chega cedo ao trabalho.",
        "cedo",
        "tarde",
        ("sozinho", "feliz", "rápido", "perto"),
    ),
    ("A mala era leve.", "leve", "pesada", ("nova", "cara", "grande", "bonita")),
    ("O caminho até a praia é curto.", "curto", "longo", ("estreito", "bonito", "seguro", "plano")),
    ("A sopa estava quente.", "quente", "fria", ("salgada", "grossa", "doce", "pronta")),
    (
        "O vendedor foi honesto com os clientes.",
        "honesto",
        "desonesto",
        ("simpático", "rápido", "educado", "atento"),
    ),
    (
        "A cidade cresceu de forma ordenada.",
        "ordenada",
        "caótica",
        ("rápida", "lenta", "planejada", "moderna"),
    ),
    (
        "O aluno deu uma resposta correta.",
        "correta",
        "errada",
        ("curta", "rápida", "exata", "escrita"),
    ),
    (
        "O cachorro do vizinho é muito manso.",
        "manso",
        "bravo",
        ("pequeno", "peludo", "calmo", "velho"),
    ),
    (
        "A porta da garagem estava aberta.",
        "aberta",
        "fechada",
        ("pintada", "quebrada", "larga", "velha"),
    ),
    (
        "A empresa teve lucro neste ano.",
        "lucro",
        "prejuízo",
        ("ganho", "venda", "imposto", "salário"),
    ),
)

WORD_CLASSES_PT: tuple[str, ...] = ("substantivo", "adjetivo", "verbo", "advérbio", "preposição")
WORD_CLASSES_EN: tuple[str, ...] = ("noun", "adjective", "verb", "adverb", "preposition")
# (sentence, word, class index)
WORD_CLASS: tuple[tuple[str, str, int], ...] = (
    ("A menina correu rapidamente até a escola.", "rapidamente", 3),
    ("O céu estava azul naquela manhã.", "azul", 1),
    ("Os alunos estudam na biblioteca.", "estudam", 2),
    ("A alegria tomou conta da sala.", "alegria", 0),
    ("O livro está sobre a mesa.", "sobre", 4),
    ("Meu avô plantou uma árvore enorme.", "enorme", 1),
    ("Nós viajaremos amanhã.", "amanhã", 3),
    ("A coragem dos bombeiros impressionou todos.", "coragem", 0),
    ("Ela canta no chuveiro todas as manhãs.", "canta", 2),
    ("O gato dormiu entre as almofadas.", "entre", 4),
    ("O menino tímido não quis falar.", "tímido", 1),
    ("Eles chegaram cedo à reunião.", "cedo", 3),
    ("A cidade inteira ouviu o trovão.", "trovão", 0),
    ("Os pássaros voam alto.", "voam", 2),
    ("Ela saiu de casa sem guarda-chuva.", "sem", 4),
)

# Plural: (singular, correct plural, 4 wrong plurals)
PLURALS: tuple[tuple[str, str, tuple[str, ...]], ...] = (
    ("cidadão", "cidadãos", ("cidadões", "cidadães", "cidadãoes", "cidadans")),
    ("pão", "pães", ("pãos", "pões", "pãoes", "pans")),
    ("leão", "leões", ("leãos", "leães", "leãoes", "leons")),
    ("animal", "animais", ("animals", "animales", "animaes", "animalis")),
    ("papel", "papéis", ("papels", "papeles", "papéus", "papes")),
    ("fóssil", "fósseis", ("fóssils", "fósseles", "fóssiles", "fossís")),
    ("funil", "funis", ("funils", "funiles", "funeis", "funiós")),
    ("capitão", "capitães", ("capitãos", "capitões", "capitãoes", "capitans")),
    ("mão", "mãos", ("mães", "mões", "mãoes", "mans")),
    ("irmão", "irmãos", ("irmães", "irmões", "irmãoes", "irmans")),
    ("lápis", "lápis", ("lápises", "lápisses", "lápiz", "lapes")),
    ("cor", "cores", ("cors", "corres", "cóis", "corz")),
)

# Foreign-language vocabulary: (sentence, word, pt options [correct + 4 wrong], en options
# [same order]).
ENGLISH_WORDS: tuple[tuple[str, str, tuple[str, ...], tuple[str, ...]], ...] = (
    (
        "Actually, the museum opens at nine, not at ten.",
        "Actually",
        ("na verdade", "atualmente", "infelizmente", "geralmente", "finalmente"),
        ("in fact", "currently", "unfortunately", "usually", "finally"),
    ),
    (
        "She likes to pretend she is a famous singer.",
        "pretend",
        ("fingir", "ter a intenção de", "esquecer", "provar", "negar"),
        ("make believe", "intend", "forget", "prove", "deny"),
    ),
    (
        "Push the door gently to open it.",
        "Push",
        ("empurre", "puxe", "tranque", "pinte", "chute"),
        ("shove", "pull", "lock", "paint", "kick"),
    ),
    (
        "My parents live in a small town near the coast.",
        "parents",
        ("pai e mãe", "parentes", "vizinhos", "amigos", "avós"),
        ("mother and father", "relatives", "neighbours", "friends", "grandparents"),
    ),
    (
        "I borrowed three books from the library yesterday.",
        "library",
        ("biblioteca", "livraria", "papelaria", "museu", "editora"),
        ("place that lends books", "bookshop", "stationery shop", "museum", "publishing house"),
    ),
    (
        "He studies engineering at a college in Ohio.",
        "college",
        ("faculdade", "colégio de ensino médio", "creche", "academia de ginástica", "biblioteca"),
        ("university", "high school", "nursery school", "gym", "library"),
    ),
    (
        "This shirt is made of a soft fabric.",
        "fabric",
        ("tecido", "fábrica", "plástico", "papel", "metal"),
        ("cloth", "factory", "plastic", "paper", "metal"),
    ),
    (
        "The weather was chilly this morning, so I took a coat.",
        "chilly",
        ("frio", "quente", "ensolarado", "seco", "abafado"),
        ("cold", "hot", "sunny", "dry", "muggy"),
    ),
    (
        "We had a quick lunch before the meeting.",
        "lunch",
        ("almoço", "lanche", "jantar", "café da manhã", "ceia"),
        ("midday meal", "snack", "dinner", "breakfast", "late-night meal"),
    ),
    (
        "The old bridge was finally repaired last year.",
        "repaired",
        ("consertada", "demolida", "pintada", "construída", "vendida"),
        ("fixed", "demolished", "painted", "built", "sold"),
    ),
    (
        "Please remember to turn off the lights.",
        "turn off",
        ("desligar", "ligar", "trocar", "comprar", "limpar"),
        ("switch off", "switch on", "replace", "buy", "clean"),
    ),
)

SPANISH_WORDS: tuple[tuple[str, str, tuple[str, ...], tuple[str, ...]], ...] = (
    (
        "Mi padre trabaja en una oficina en el centro de la ciudad.",
        "oficina",
        ("escritório", "oficina mecânica", "loja", "fábrica", "escola"),
        ("office", "car repair shop", "store", "factory", "school"),
    ),
    (
        "Ana está embarazada de cinco meses.",
        "embarazada",
        ("grávida", "envergonhada", "cansada", "preocupada", "doente"),
        ("pregnant", "embarrassed", "tired", "worried", "sick"),
    ),
    (
        "Espérame un rato, que ya vuelvo.",
        "rato",
        ("momento", "roedor", "lugar", "carro", "ano"),
        ("short while", "rodent", "place", "car", "year"),
    ),
    (
        "Esta noche vamos a la cena de cumpleaños de Pedro.",
        "cena",
        ("jantar", "espetáculo", "viagem", "reunião escolar", "competição"),
        ("dinner", "show", "trip", "school meeting", "competition"),
    ),
    (
        "Escribe tu apellido en la primera línea.",
        "apellido",
        ("sobrenome", "apelido", "endereço", "idade", "assinatura"),
        ("surname", "nickname", "address", "age", "signature"),
    ),
    (
        "Borra la pizarra antes de salir del aula.",
        "Borra",
        ("apague", "suje", "decore", "carregue", "fotografe"),
        ("erase", "dirty", "decorate", "carry", "photograph"),
    ),
    (
        "El niño es zurdo y escribe con la mano izquierda.",
        "zurdo",
        ("canhoto", "surdo", "destro", "baixo", "tímido"),
        ("left-handed", "deaf", "right-handed", "short", "shy"),
    ),
    (
        "Me encanta el pelo largo de mi hermana.",
        "largo",
        ("comprido", "largo", "curto", "cacheado", "escuro"),
        ("long", "wide", "short", "curly", "dark"),
    ),
    (
        "Compré un vaso nuevo para tomar jugo.",
        "vaso",
        ("copo", "vaso de flores", "panela", "prato", "garfo"),
        ("drinking glass", "flower vase", "pan", "plate", "fork"),
    ),
    (
        "Mi abuelo usa gafas para leer el periódico.",
        "gafas",
        ("óculos", "luvas", "chinelos", "lanterna", "bengala"),
        ("glasses", "gloves", "slippers", "flashlight", "walking stick"),
    ),
    (
        "Siempre me acuerdo de tu sonrisa.",
        "sonrisa",
        ("sorriso", "risada", "voz", "olhar", "abraço"),
        ("smile", "laugh", "voice", "look", "hug"),
    ),
)
