/* The sample library: two short documents written for Quire (one English, one German), loaded only
 * when someone presses "Try it with a sample library".  A classic script, so it loads from file://
 * too, and the service worker precaches it like every other file.  Licence: the same as Quire. */
self.QuireSample = {
  version: 1,
  // The category the sample is filed under, named in the page's language when it is added.
  category: { en: 'Sample library', de: 'Beispielbibliothek' },
  files: [
    {
      name: 'Quire user guide (sample).md',
      text: [
        '# Quire user guide',
        '',
        'Quire is a private study companion. It reads your own documents inside this browser tab, finds the passages that answer a question, and turns your material into quizzes, flashcards, workshops and mind maps. This guide is a sample document: remove it whenever you like.',
        '',
        '## Adding documents',
        '',
        'Drop files or whole folders on the Library page, choose them with the buttons, or paste text. Quire reads PDF, Word, PowerPoint, Excel, CSV, Markdown, HTML, EPUB and plain text. Adding a file only stages it: nothing is searchable yet.',
        '',
        'Staging and training are two separate steps. Staging records the file; training reads every staged file, cuts it into passages of about a thousand characters and builds the search index in one go. If you close the tab in the middle of training, the library stays exactly as it was before, and pressing Train again finishes the job.',
        '',
        'Each source can belong to a category, such as Biology or Exam 2. Categories let you search, ask and study inside one subject only.',
        '',
        '## Searching and asking',
        '',
        'Search ranks passages with BM25, a keyword method that weighs rare words more than common ones, and, when a model server offers an embedding model, with meaning-based search as well. Every hit names its source and its place: the page of a PDF, the slide of a presentation, the rows of a spreadsheet, or the section of a document.',
        '',
        'Ask answers a question in full sentences when a local model server is connected, and cites the passages it used with numbers like [1]. Without a model server, Ask still answers: it shows the best passages with their sources and highlights the words of your question.',
        '',
        '## Study tools',
        '',
        'Pick sources or a category, then a tool. Every tool also works without a model server; it then builds its material from the sentences and headings of your documents.',
        '',
        '| Tool | What it makes | How you use it |',
        '| --- | --- | --- |',
        '| Quiz | Multiple-choice and true/false questions | Answer, see the explanation and the passage it came from |',
        '| Flashcards | Basic and cloze cards | Review with spaced repetition: Again, Hard, Good or Easy |',
        '| Workshop | An outline of lessons | Open one lesson at a time and mark it done |',
        '| Mind map | A map of the main topics | Collapse branches, zoom, and open the passages of a node |',
        '',
        'Spaced repetition shows a card again just before you would forget it. Quire uses the FSRS scheduler: a card you rate Easy comes back after a long interval, a card you rate Again comes back within minutes.',
        '',
        '## Privacy',
        '',
        'Quire keeps everything in this browser: your documents, the passages, the search index, your chats and your study progress. Nothing leaves this computer except the requests to the model server you choose in Settings, and the page itself blocks every other connection. The Privacy page lists what is stored, how large it is, and every request the page has made. You can export everything as one vault file and import it on another computer.',
        '',
      ].join('\n'),
    },
    {
      name: 'Der Wasserkreislauf (Beispiel).md',
      text: [
        '# Der Wasserkreislauf',
        '',
        'Dieses Dokument gehört zur Beispielbibliothek von Quire. Es erklärt in Kürze, wie das Wasser der Erde zwischen Meer, Luft und Land wandert.',
        '',
        '## Verdunstung',
        '',
        'Die Sonne erwärmt die Oberfläche der Ozeane, Seen und Flüsse. Dabei verdunstet Wasser und steigt als unsichtbarer Wasserdampf in die Atmosphäre. Auch Pflanzen geben über ihre Blätter Wasser ab; diesen Vorgang nennt man Transpiration. Verdunstung und Transpiration zusammen heißen Evapotranspiration.',
        '',
        '## Kondensation und Niederschlag',
        '',
        'In größerer Höhe kühlt die Luft ab. Der Wasserdampf kondensiert an winzigen Staubteilchen zu Tröpfchen, und es bilden sich Wolken. Werden die Tröpfchen schwer genug, fallen sie als Niederschlag zur Erde: als Regen, Schnee, Graupel oder Hagel.',
        '',
        '## Abfluss und Versickerung',
        '',
        'Ein Teil des Niederschlags fließt über die Oberfläche in Bäche und Flüsse und schließlich zurück ins Meer. Ein anderer Teil versickert im Boden und wird zu Grundwasser. Grundwasser kann Jahrzehnte oder sogar Jahrtausende im Gestein bleiben, bevor es über Quellen wieder an die Oberfläche tritt.',
        '',
        '## Wasser der Erde in Zahlen',
        '',
        '| Speicher | Anteil am Wasser der Erde | Verweildauer (typisch) |',
        '| --- | --- | --- |',
        '| Ozeane | 96,5 % | etwa 3.000 Jahre |',
        '| Eis und Gletscher | 1,7 % | 20 bis 10.000 Jahre |',
        '| Grundwasser | 1,7 % | Wochen bis 10.000 Jahre |',
        '| Atmosphäre | 0,001 % | etwa 9 Tage |',
        '',
        'Jedes Jahr verdunsten weltweit rund 500.000 Kubikkilometer Wasser, etwa 86 Prozent davon über den Ozeanen. Ebenso viel fällt als Niederschlag wieder zur Erde, sodass die Gesamtmenge des Wassers gleich bleibt.',
        '',
      ].join('\n'),
    },
  ],
  // Questions that work with and without a model, in the page's language: each is answered by a
  // passage of the sample. Without a model, search matches words, so a question finds its passage
  // only in its own language: the German page asks about the German document and keeps one English
  // question for the English guide, marked as such.
  questions: {
    en: [
      'What is the difference between staging and training?',
      'Which study tools does Quire offer?',
      { text: 'Wie viel Wasser verdunstet jedes Jahr?', lang: 'de' },
    ],
    de: [
      'Wie viel Wasser verdunstet jedes Jahr?',
      'Wie lange bleibt Grundwasser im Gestein?',
      { text: 'What is the difference between staging and training?', lang: 'en' },
    ],
  },
  search: { en: 'spaced repetition', de: 'Niederschlag' },
  // A German question about the English guide's Privacy section that shares no word with it: only
  // meaning-based search finds it (this browser's own multilingual-e5-small, or a server's model).
  meaning: { text: 'Wohin werden meine Daten gesendet?', lang: 'de', about: 'en' },
};
