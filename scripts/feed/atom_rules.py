"""The rules RFC 4287 states beside its schema, which a RELAX NG validator does not check:
every entry has an author, or the feed has one (4.1.1, 4.1.2); a feed and each entry have at
most one alternate link per type and hreflang (4.1.1, 4.1.2); an entry without content has an
alternate link (4.1.2); content with `src` is empty (4.1.3.2); ids are absolute IRIs (4.2.6);
a date is an RFC 3339 date-time with a time zone (3.3); and the entries' ids are unique
(4.2.6). Usage: atom_rules.py FEED.xml; exits 1 naming the first broken rule."""

import re
import sys
import xml.etree.ElementTree as ElementTree

ATOM = "{http://www.w3.org/2005/Atom}"
DATE = re.compile(r"^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d+)?(Z|[+-]\d{2}:\d{2})$")
ABSOLUTE_IRI = re.compile(r"^[A-Za-z][A-Za-z0-9+.-]*:\S+$")


def fail(rule):
    print(f"{sys.argv[1]}: {rule}")
    sys.exit(1)


def alternates_unique(element, what):
    seen = set()
    for link in element.findall(f"{ATOM}link"):
        if link.get("rel", "alternate") == "alternate":
            key = (link.get("type"), link.get("hreflang"))
            if key in seen:
                fail(f"{what} has two alternate links of type {key[0]} (4.1.1)")
            seen.add(key)
    return seen


feed = ElementTree.parse(sys.argv[1]).getroot()
if feed.tag != f"{ATOM}feed":
    fail("the root is not atom:feed")
feed_has_author = feed.find(f"{ATOM}author") is not None
alternates_unique(feed, "the feed")
ids = []
for element in feed.iter():
    if element.tag in (f"{ATOM}updated", f"{ATOM}published") and not DATE.match(element.text or ""):
        fail(f"{element.tag[len(ATOM):]} {element.text!r} is not an RFC 3339 date-time (3.3)")
    if element.tag == f"{ATOM}id" and not ABSOLUTE_IRI.match(element.text or ""):
        fail(f"id {element.text!r} is not an absolute IRI (4.2.6)")
for entry in feed.findall(f"{ATOM}entry"):
    entry_id = entry.findtext(f"{ATOM}id")
    if not feed_has_author and entry.find(f"{ATOM}author") is None:
        fail(f"entry {entry_id} has no author, nor has the feed (4.1.2)")
    alternates = alternates_unique(entry, f"entry {entry_id}")
    content = entry.find(f"{ATOM}content")
    if content is None and not alternates:
        fail(f"entry {entry_id} has neither content nor an alternate link (4.1.2)")
    if content is not None and content.get("src") and (len(content) or (content.text or "").strip()):
        fail(f"entry {entry_id}: content with src is not empty (4.1.3.2)")
    ids.append(entry_id)
if len(ids) != len(set(ids)):
    fail("two entries share an id (4.2.6)")
print(f"{sys.argv[1]}: RFC 4287's rules hold ({len(ids)} entries)")
