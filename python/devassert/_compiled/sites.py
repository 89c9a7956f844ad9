"""The in-region check calls of the graphs compiled so far, as attributes
named as each graph's code calls them (`inside._caller`).

AOTAutograd's cache key pickles a graph's code with an import of every
function it calls: each must be found under its module and name. A name
stands for one kind of site (`inside._site_key`); the latest function of
that name is kept.
"""
