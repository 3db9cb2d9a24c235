"""Team memory through git (SPEC §14): a merge driver that merges one memory file by entry.

git hands the driver three versions of a file (BASE, OURS, THEIRS). Each is parsed with the
same parser as everything else (`markdown.parse_text`) and read as a sequence of *tokens*:
every entry is one token (its text is its identity, duplicates are told apart by position),
and every line between entries (a heading, a blank line, a thematic break) is a token of its
own. Each side is diffed against BASE token by token; a replaced run is paired up entry to
entry (by similarity, in order), so a changed entry is known as changed and not as "one
deleted, one added". Then, per BASE token and per gap between them:

- kept on both sides → kept; changed or deleted on one side only → that change;
- changed the same way on both → once; deleted on both → gone;
- changed differently on both, or changed on one side and deleted on the other → a conflict
  around that token alone (standard `<<<<<<<` / `=======` / `>>>>>>>` markers; conflicting
  tokens that are neighbours share one block);
- added in the same gap on both sides → ours first, then theirs, each under the heading it
  was added under (theirs' additions to the current section come before a section ours
  opened); an entry both added is kept once.

The frontmatter merges as a whole when one side left it alone, else key by key: `tags`
united (ours, then the ones theirs added; a tag one side removed stays removed), the later
`updatedAt`, any other key changed on one side only → that change, changed differently on
both → the whole frontmatter block is one conflict.

Nothing is trusted: the result (and each side of it, when it has conflicts) is read back as
`markdown.parse_text` reads it (the joins between runs of a version's lines parsed again, the
rest taken from the versions' own parse: readback.py) and must give exactly the merged
entries, sections and frontmatter, in order; a blank line is put at a seam where two pieces
that were not neighbours would join (SPEC §2). When that cannot be done, or when a version
is a file memtui would skip (not UTF-8, over 1 MiB, invalid frontmatter), the driver falls
back to git's own line merge (`git merge-file`): never a silently wrong merge.

`install` / `uninstall` add the attribute line to the workspace's `.gitattributes` and the
driver to the repository-local git config.

The steps, one module each: parse (a version as tokens), align (each side against BASE),
resolve (the merged sequence), frontmatter, write (render and check, with readback), driver
(what git runs), install.
"""

from .driver import DriverResult, merge_with_git, run_driver, whole_file_conflict
from .install import ATTRIBUTE_LINE, DRIVER, GitSetupError, SetupReport, install, uninstall
from .parse import CannotMergeByEntry
from .write import EntryMerge, merge_entries

__all__ = ["ATTRIBUTE_LINE", "DRIVER", "CannotMergeByEntry", "DriverResult", "EntryMerge", "GitSetupError", "SetupReport",
           "install", "merge_entries", "merge_with_git", "run_driver", "uninstall", "whole_file_conflict"]
