"""Compact stopword lists, embedded so the engine needs no data files.

English is the NLTK list minus negations ("no", "not", "nor") and a few
contractions; negations carry meaning in claims and questions ("X does not
cause Y").  German is the NLTK list minus "nicht"/"kein*" for the same reason.
Both are casefolded, so "ß" appears as "ss".
"""

from __future__ import annotations

ENGLISH = frozenset(
    """
    a about above after again against all am an and any are as at be because
    been before being below between both but by can could did do does doing
    down during each few for from further had has have having he her here hers
    herself him himself his how i if in into is it its itself just me more most
    my myself of off on once only or other ought our ours ourselves out over own
    same she should so some such than that the their theirs them themselves then
    there these they this those through to too under until up very was we were
    what when where which while who whom why will with would you your yours
    yourself yourselves s t d ll m re ve
    """.split()
)

GERMAN = frozenset(
    """
    aber alle allem allen aller alles als also am an ander andere anderem anderen
    anderer anderes anderm andern anderr anders auch auf aus bei bin bis bist da
    damit dann das dass dasselbe dazu dein deine deinem deinen deiner deines dem
    demselben den denn denselben der derer derselbe derselben des desselben
    dessen dich die dies diese dieselbe dieselben diesem diesen dieser dieses dir
    doch dort du durch ein eine einem einen einer eines einig einige einigem
    einigen einiger einiges einmal er es etwas euch euer eure eurem euren eurer
    eures fur für gegen gewesen hab habe haben hat hatte hatten hier hin hinter
    ich ihm ihn ihnen ihr ihre ihrem ihren ihrer ihres im in indem ins ist jede
    jedem jeden jeder jedes jene jenem jenen jener jenes jetzt kann konnen können
    konnte könnte machen man manche manchem manchen mancher manches mein meine
    meinem meinen meiner meines mich mir mit muss musste nach nun nur ob oder
    ohne sehr sein seine seinem seinen seiner seines selbst sich sie sind so
    solche solchem solchen solcher solches soll sollte sondern sonst uber über
    um und uns unsere unserem unseren unserer unseres unter viel vom von vor
    wahrend während war waren warst was weg weil weiter welche welchem welchen
    welcher welches wenn werde werden wie wieder will wir wird wirst wo wollen
    wollte wurde würde wurden würden zu zum zur zwar zwischen
    """.split()
)

BY_LANGUAGE = {"en": ENGLISH, "de": GERMAN}
