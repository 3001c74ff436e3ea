"""Replace identifiers in a bundle with stable tokens (the engine behind `flamediag redact`).

What is replaced (doc/redact.md has the full rules and the limits):

    host names   -> host-1, host-2 ...       (manifest host, uname nodename, bundle name; FQDN + short;
                                              numeric names as whole tokens; any name under the domain)
    domains      -> domain-1 ...              (the host's DNS domain: from its FQDN, resolv.conf, text)
    IPv4         -> 10.255.0.1, 10.255.0.2 ... (loopback, 0.0.0.0, netmasks and version strings kept)
    IPv6         -> fd00:ff::1 ...             (::, ::1 kept)
    MAC          -> 02:00:00:00:00:01 ...       (00:00:.. and ff:ff:.. kept)
    user names   -> user-1 ...                 (/home/<user>, /home/<domain>/<user>, /home/<user>@<domain>)
    arguments    -> arg-1 ...                  (manifest command_line, perf `# cmdline :` lines)

The same value gets the same token everywhere in one bundle; tokens keep the shape of what they
replace (an IPv4 token is an IPv4 address) so every parser still reads the redacted files.

Examples:
    >>> r = Redactor(hostnames=["web1.example.com"], users=["alice"])
    >>> r.text("Linux web1 6.1.0-18-amd64; web1.example.com 10.1.2.3:22 -> 10.1.2.3")
    'Linux host-1 6.1.0-18-amd64; host-2 10.255.0.1:22 -> 10.255.0.1'
    >>> r.text("kernel 5.10.0.123, sysctl vm.zone_reclaim_mode, /home/alice/bin/app, lo 127.0.0.1")
    'kernel 5.10.0.123, sysctl vm.zone_reclaim_mode, /home/user-1/bin/app, lo 127.0.0.1'
    >>> r.text("link/ether 52:54:00:AB:cd:ef brd ff:ff:ff:ff:ff:ff  inet6 fe80::5054:ff:feab:cdef/64")
    'link/ether 02:00:00:00:00:01 brd ff:ff:ff:ff:ff:ff  inet6 fd00:ff::1/64'
"""
from __future__ import annotations

import ipaddress
import json
import re
import shlex
from pathlib import Path
from typing import Dict, Iterable, List, Optional

from . import bundlewriter

KINDS = ("hostnames", "domains", "ipv4", "ipv6", "mac", "users", "args")

# Names that identify nobody; replacing them would only damage the data.
NOT_IDENTIFYING_HOSTS = frozenset({"localhost", "localhost.localdomain", "localhost6", "ip6-localhost", "none", "(none)"})
NOT_IDENTIFYING_USERS = frozenset({"root", "nobody", "user", "users", "admin", "guest", "shared", "public", "skel"})

# MAC-48 with colons or dashes (ip, Windows), Cisco's dotted form, 20-byte InfiniBand (ip link)
_MAC = (r"(?<![\w:.-])(?P<mac>(?:[0-9A-Fa-f]{2}:){19}[0-9A-Fa-f]{2}|[0-9A-Fa-f]{2}([:-])[0-9A-Fa-f]{2}"
        r"(?:\2[0-9A-Fa-f]{2}){4}|[0-9A-Fa-f]{4}\.[0-9A-Fa-f]{4}\.[0-9A-Fa-f]{4})(?![\w:-]|\.\w)")
# v6v4: an IPv4 address written inside an IPv6 one (RFC 4291 2.2 form 3): ::ffff:10.1.2.3, 2001:db8:1:2::10.1.2.3
_IPV6 = (r"(?<![\w:.])(?P<ipv6>(?:[0-9A-Fa-f]{0,4}:){2,7}(?:(?P<v6v4>(?:\d{1,3}\.){3}\d{1,3})(?![\w:]|\.\d)"
         r"|[0-9A-Fa-f]{0,4}(?![\w:.])))")
# prefixes that say only "this is an IPv4 address" (IPv4-mapped, -compatible, -translated, NAT64 RFC 6052)
NOT_IDENTIFYING_V6_PREFIXES = frozenset({"::ffff:0:0", "::", "::ffff:0:0:0", "64:ff9b::"})
# also in tcpdump's host.port (10.1.2.3.22) and in ranges (10.0.0.1-10.0.0.9)
_IPV4 = r"(?<![\w.])(?P<ipv4>(?:\d{1,3}\.){3}\d{1,3})(?!\w|\.\d+\.|-[A-Za-z_])"
_HOME_END = r"(?=[/\s'\"):;,\]]|$)"
_HOME_USER = r"[A-Za-z0-9_][A-Za-z0-9_.-]{0,31}"
_HOME_DOMAIN_AT = r"[A-Za-z0-9][A-Za-z0-9.-]{0,252}"
# a NetBIOS name or Kerberos realm as winbind writes it in /home/%D/%U: upper case (CORP, CORP.EXAMPLE.COM)
_REALM = r"(?-i:(?=[A-Z0-9.-]*[A-Z])[A-Z0-9][A-Z0-9-]*(?:\.[A-Z0-9][A-Z0-9-]*)*)"
_VERSION_BEFORE = re.compile(
    r"(?i)(\b(version|ver|release|firmware|fw)\s*[:=]?\s*|\b(kernel|linux)\s+|\blinux\s+\S+\s+)$")
_SUBCOMMAND = re.compile(r"^[a-z][a-z-]{2,}$")  # 'capture' in 'flamediag capture', 'record' in 'perf record'
_USER_NAME = re.compile(r"^[A-Za-z_][A-Za-z0-9_.-]{0,31}$")
_HOST_NAME = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_.-]{0,252}$")    # '_' is not DNS, but hosts use it
_DOMAIN_NAME = re.compile(r"^(?:[a-z0-9_](?:[a-z0-9_-]{0,62})\.)+[a-z][a-z0-9-]{1,62}$")
# the last label of a dotted word that is a file name, not a DNS domain (web1.tar.gz, app.service)
FILE_SUFFIXES = frozenset("gz tar bz2 xz zst zip log txt conf cfg ini json yaml yml xml html svg md so ko py sh pl "
                          "rb service socket target mount timer slice scope pid lock sock old bak tmp swp out err "
                          "data folded script csv tsv".split())
NOT_IDENTIFYING_DOMAIN_ENDS = ("local", "localdomain", "localhost", "arpa", "invalid")
# <user> or <domain>/<user> or <user>@<domain> after /home/ or /Users/ (sssd fallback_homedir, winbind
# template homedir): read whole in discover(), which decides which component is the user
_HOME_SCAN = re.compile(r"/(?:home|Users)/(?P<first>[A-Za-z0-9_][A-Za-z0-9_.@-]{0,252})"
                        r"(?:/(?P<second>" + _HOME_USER + r"))?" + _HOME_END)
# directories often found under /home/<x>/: never taken for a user in the <domain>/<user> form
COMMON_DIRS = frozenset("bin lib lib64 src tmp etc opt var local share data work cache logs log app apps "
                        "projects build dist docs config backup".split())
# lines naming the kernel: a host name inside the release (5.15.0-web1) is replaced there too
_KERNEL_LINE = re.compile(r"(?m)^(?:Linux\s|# os release :|# hostname :).*$")
_RESOLV_DOMAINS = re.compile(r"(?m)^[ \t]*(?:search|domain)[ \t]+([^\n#;]+)")


def _names_pattern(group: str, names: Iterable[str], ignore_case: bool, loose: bool = False) -> Optional[str]:
    """A whole-word alternation. Strict (the default): not inside a dotted, dashed or slashed name,
    so vm.swappiness, /proc/sys/vm/ and kvm stay when the host is called 'vm'. Loose (distinctive
    names such as web1 or ip-10-0-1-23): only not inside a longer alphanumeric run, so
    web1-agent and web1.conf are redacted too."""
    alternatives = _alternation(names)
    if not alternatives:
        return None
    flags = "(?i:" if ignore_case else "(?:"
    if loose:
        return rf"(?<![A-Za-z0-9])(?P<{group}>{flags}{alternatives}))(?![A-Za-z0-9])"
    return rf"(?<![\w.\-/])(?P<{group}>{flags}{alternatives}))(?![\w\-/]|\.\w)"


def _alternation(names: Iterable[str]) -> str:
    return "|".join(re.escape(name) for name in sorted(set(names), key=lambda n: (-len(n), n)))


def _domain_pattern(domains: Iterable[str]) -> str:
    """The domain itself, or any name under it (db9.corp.example.com is a host name: one token)."""
    return (rf"(?<![\w-])(?P<fqdn>(?:[A-Za-z0-9_][A-Za-z0-9_-]{{0,62}}\.){{0,10}})"
            rf"(?P<domain>(?i:{_alternation(domains)}))(?![\w-]|\.\w)")


def _numeric_pattern(names: Iterable[str]) -> str:
    """A numeric host name (12345, 01) only as a whole token: not part of a number (112345, 12345.6,
    12,345), a time (01:02), a percentage (12345%), a path, a range or a dotted/dashed name."""
    return rf"(?<![\w.,:/%+-])(?P<hostn>{_alternation(names)})(?![\w,:/%+-]|\.\d)"


def _kernel_names_pattern(names: List[str]):
    """Host names in a kernel string, with only letters and digits as word characters (5.15.0-vm-amd64)."""
    if not names:
        return None
    return re.compile(rf"(?i)(?<![A-Za-z0-9])(?:{_alternation(names)})(?![A-Za-z0-9])")


def identifying_domains(candidates: Iterable[str]) -> List[str]:
    """DNS domains worth replacing: two labels or more, not a file name, not a reserved local one.

    >>> identifying_domains(["corp.example.com", "CORP.EXAMPLE.COM.", "corp", "tar.gz", "localdomain",
    ...                      "svc.cluster.local", "168.1.2"])
    ['corp.example.com']
    """
    found = set()
    for name in candidates:
        name = (name or "").strip().lower().strip(".")
        last = name.rsplit(".", 1)[-1]
        if _DOMAIN_NAME.match(name) and last not in FILE_SUFFIXES and last not in NOT_IDENTIFYING_DOMAIN_ENDS:
            found.add(name)
    return sorted(found)


def home_domain_names(domains: List[str], hostnames: List[str], hints: Iterable[str]) -> List[str]:
    """Names that stand for a domain as the first component of /home/<domain>/<user>: the domains, their
    first label (sssd's short domain name), one-label domains of FQDN host names and `hints`."""
    found = set(domains)
    found.update(d.split(".")[0] for d in domains)
    found.update(h.split(".", 1)[1] for h in hostnames if h.count(".") == 1)
    found.update(h.strip().lower() for h in hints if h and _HOST_NAME.match(h.strip()))
    return sorted(n for n in found if n not in COMMON_DIRS and n not in NOT_IDENTIFYING_USERS
                  and n.rsplit(".", 1)[-1] not in NOT_IDENTIFYING_DOMAIN_ENDS)


def is_distinctive(name: str) -> bool:
    """A name unlikely to be an ordinary word: has a digit, dash or dot, or is 8+ characters.

    >>> [is_distinctive(n) for n in ("vm", "debian", "web1", "ip-10-0-1-23", "fileserver")]
    [False, False, True, True, True]
    """
    return any(ch.isdigit() or ch in "-._" for ch in name) or len(name) >= 8


class Redactor:
    """Consistent token maps for one bundle, and the text substitution that applies them."""

    def __init__(self, hostnames: Iterable[str] = (), users: Iterable[str] = (), domains: Iterable[str] = ()):
        self.hostnames = expand_hostnames(hostnames)
        self.domains = identifying_domains([*domains, *(h.split(".", 1)[1] for h in self.hostnames if "." in h)])
        self.home_domains = home_domain_names(self.domains, self.hostnames, domains)
        self.users = sorted({u for u in users if _USER_NAME.match(u) and u.lower() not in NOT_IDENTIFYING_USERS})
        self.maps: Dict[str, Dict[str, str]] = {kind: {} for kind in KINDS}
        self.occurrences: Dict[str, int] = {kind: 0 for kind in KINDS}
        self._pattern = self._compile()
        self._home_scan = re.compile(self._home_pattern())
        named = [h for h in self.hostnames if not h.isdigit()]
        self._kernel_names = _kernel_names_pattern(named + [f"{h}.{d}" for h in named for d in self.domains])
        self._line_cache: Dict[str, tuple] = {}

    def _compile(self):
        parts = [_MAC, _IPV6, _IPV4, self._home_pattern()]
        if self.hostnames:
            parts.append(rf"(?P<bundle>flamediag-)(?P<bundlehost>(?i:{_alternation(self.hostnames)}))"
                         rf"(?=-\d{{8}}T\d{{6}}Z)")
        if self.domains:      # before the host names: web1.corp.example.com is one name, not web1 + rest
            parts.append(_domain_pattern(self.domains))
        named = [h for h in self.hostnames if not h.isdigit()]
        loose_hosts = [h for h in named if is_distinctive(h)]
        strict_hosts = [h for h in named if not is_distinctive(h)]
        numeric_hosts = [h for h in self.hostnames if h.isdigit() and len(h) > 1]
        if numeric_hosts:
            parts.append(_numeric_pattern(numeric_hosts))
        for group, names, ignore_case, loose in (("hostl", loose_hosts, True, True), ("host", strict_hosts, True, False),
                                                 ("userl", [u for u in self.users if is_distinctive(u)], False, True),
                                                 ("user", [u for u in self.users if not is_distinctive(u)], False, False)):
            pattern = _names_pattern(group, names, ignore_case, loose)
            if pattern:
                parts.append(pattern)
        return re.compile("|".join(parts))

    def _home_pattern(self) -> str:
        """/home/<user>, /home/<domain>/<user> (domain: known to this bundle, or a NetBIOS name / realm in
        upper case), /home/<user>@<domain>."""
        known = _alternation(self.home_domains)
        domain = rf"(?i:{known})|{_REALM}" if known else _REALM
        return (rf"(?P<home>/(?:home|Users)/)(?:(?P<homedomain>{domain})/(?!(?:{'|'.join(sorted(COMMON_DIRS))})"
                rf"{_HOME_END}))?(?P<homeuser>{_HOME_USER})(?:@(?P<homeat>{_HOME_DOMAIN_AT}))?{_HOME_END}")

    # -- tokens -----------------------------------------------------------------------
    def token(self, kind: str, value: str) -> str:
        table = self.maps[kind]
        if value not in table:
            table[value] = _make_token(kind, len(table) + 1, value)
        self.occurrences[kind] += 1
        return table[value]

    # -- substitution -----------------------------------------------------------------
    def text(self, text: str) -> str:
        """Every identifier in `text` replaced by its token."""
        if self._kernel_names and ("Linux" in text or "# " in text):
            text = _KERNEL_LINE.sub(lambda line: self.kernel(line.group(0)), text)
        return self._pattern.sub(self._replace, text)

    def kernel(self, text: str) -> str:
        """Host names in a kernel string (`uname -a`, /proc/version, the manifest's kernel) are replaced
        inside the release too (5.15.0-web1, 6.1.0-vm); versions and addresses are left to text()."""
        if not self._kernel_names:
            return text
        return self._kernel_names.sub(lambda m: self.token("hostnames", m.group(0).lower()), text)

    def lines(self, text: str) -> str:
        """text(), line by line through a cache: perf script repeats the same stack lines
        millions of times, and a line always redacts to the same result."""
        out = []
        cache = self._line_cache
        for line in text.splitlines(keepends=True):
            if line[:1] not in ("\t", " "):   # event and header lines are unique: not worth caching
                out.append(self.text(line))
                continue
            hit = cache.get(line)
            if hit is None:
                before = dict(self.occurrences)
                redacted = self.text(line)
                counts = tuple((k, self.occurrences[k] - before[k]) for k in KINDS if self.occurrences[k] != before[k])
                if len(cache) > 50_000:
                    cache.clear()
                cache[line] = hit = (redacted, counts)
            else:
                for kind, count in hit[1]:
                    self.occurrences[kind] += count
            out.append(hit[0])
        return "".join(out)

    def _replace(self, match) -> str:
        kind = match.lastgroup
        if kind == "mac":
            return self._mac(match.group("mac"))
        if kind == "ipv6" and match.group("v6v4"):
            return self._ipv6_v4(match)
        if kind == "ipv6":
            return self._ipv6(match.group("ipv6"))
        if kind == "ipv4":
            return self._ipv4(match)
        if kind in ("homeuser", "homeat"):
            return self._home(match)
        if kind == "domain":
            if match.group("fqdn"):
                return self.token("hostnames", match.group(0).lower())
            return self.token("domains", match.group("domain").lower())
        if kind == "hostn":
            return self.token("hostnames", match.group(kind))
        if kind == "bundlehost":
            return match.group("bundle") + self.token("hostnames", match.group("bundlehost").lower())
        if kind in ("host", "hostl"):
            return self.token("hostnames", match.group(kind).lower())
        if kind in ("user", "userl"):
            return self.token("users", match.group(kind))
        return match.group(0)

    def home_paths(self, text: str):
        """The home-directory path matches in `text` (groups homedomain, homeuser, homeat)."""
        return self._home_scan.finditer(text)

    def _home(self, match) -> str:
        user = match.group("homeuser")
        out = match.group("home")
        if match.group("homedomain"):
            out += self.token("domains", match.group("homedomain").lower()) + "/"
        out += user if user.lower() in NOT_IDENTIFYING_USERS else self.token("users", user)
        if match.group("homeat"):
            out += "@" + self.token("domains", match.group("homeat").lower())
        return out

    def _ipv6_v4(self, match) -> str:
        """Both halves: the IPv4 part gets the token it gets alone; the 96-bit prefix its own token
        unless it is a well-known one that identifies nobody (::ffff:, 64:ff9b::)."""
        v4 = match.group("v6v4")
        prefix = match.group("ipv6")[: -len(v4)]
        try:
            address = ipaddress.IPv6Address(prefix + v4)
        except ValueError:
            return match.group(0)
        v4_out = self._ipv4_value(v4)
        head = ipaddress.IPv6Address(int(address) >> 32 << 32).compressed
        if head in NOT_IDENTIFYING_V6_PREFIXES:
            return prefix + v4_out
        return self.token("ipv6", head + "/96")[: -len("/96")] + v4_out

    def _mac(self, value: str) -> str:
        key = value.lower().replace("-", ":")
        if key in ("00:00:00:00:00:00", "ff:ff:ff:ff:ff:ff", "0000.0000.0000", "ffff.ffff.ffff"):
            return value
        return self.token("mac", key)

    def _ipv6(self, value: str) -> str:
        try:
            address = ipaddress.IPv6Address(value)
        except ValueError:
            return value
        if address.is_loopback or address.is_unspecified:
            return value
        groups = [g for g in value.split(":") if g]
        if not any(ch.isdigit() for ch in value) and len(groups) < 4:
            return value  # C++-like 'dead::beef' is a symbol, not an address
        return self.token("ipv6", address.compressed)

    def _ipv4(self, match) -> str:
        value = match.group("ipv4")
        line_start = match.string.rfind("\n", 0, match.start()) + 1
        if _VERSION_BEFORE.search(match.string[max(line_start, match.start() - 80):match.start()]):
            return value  # 'kernel 5.10.0.123' is a version
        return self._ipv4_value(value)

    def _ipv4_value(self, value: str) -> str:
        octets = value.split(".")
        if any(int(o) > 255 or (len(o) > 1 and o.startswith("0")) for o in octets):
            return value
        address = ipaddress.IPv4Address(value)
        if address.is_loopback or address.is_unspecified or octets[0] == "255" or value == "255.255.255.255":
            return value
        return self.token("ipv4", value)

    # -- command lines ----------------------------------------------------------------
    def command_line(self, line: str) -> str:
        """Keep the program and its flags; every other argument becomes arg-N.

        >>> Redactor().command_line("flamediag capture -d 30 --label 'db outage' -o=/home/bob/x")
        'flamediag capture -d arg-1 --label arg-2 -o=arg-3'
        """
        try:
            words = shlex.split(line)
        except ValueError:
            words = line.split()
        if not words:
            return line
        keep = 2 if len(words) > 1 and _SUBCOMMAND.match(words[1]) else 1
        out = words[:keep]
        for word in words[keep:]:
            out.append(self._argument(word))
        return " ".join(out)

    def _argument(self, word: str) -> str:
        if word.startswith("-"):
            flag, eq, value = word.partition("=")
            return f"{flag}={self.token('args', value)}" if eq else word
        return self.token("args", word)

    def summary(self) -> Dict[str, int]:
        return {kind: len(self.maps[kind]) for kind in KINDS}


def _make_token(kind: str, index: int, value: str = "") -> str:
    if kind == "ipv4":
        return f"10.255.{index // 256}.{index % 256}"
    if kind == "ipv6" and value.endswith("/96"):
        return f"fd00:ff:{index:x}::/96"        # a prefix: the IPv4 token is appended to it
    if kind == "ipv6":
        return f"fd00:ff::{index:x}"
    if kind == "mac":
        return "02:00:00:00:{:02x}:{:02x}".format(index // 256 % 256, index % 256)
    prefix = {"hostnames": "host", "domains": "domain", "users": "user", "args": "arg"}[kind]
    return f"{prefix}-{index}"


def expand_hostnames(names: Iterable[str]) -> List[str]:
    """Host names worth replacing: each name and, for an FQDN, its short name. A numeric name (12345)
    is one; a dotted number is an address, not a name.

    >>> expand_hostnames(["web1.example.com", "localhost", "", "WEB1", "01", "10.1.2.3"])
    ['01', 'web1', 'web1.example.com']
    """
    found = set()
    for name in names:
        name = (name or "").strip().lower().rstrip(".")
        if not name or name in NOT_IDENTIFYING_HOSTS or not _HOST_NAME.match(name) or (
                "." in name and name.replace(".", "").isdigit()):
            continue
        found.add(name)
        short = name.split(".")[0]
        if short and short not in NOT_IDENTIFYING_HOSTS:
            found.add(short)
    return sorted(found)


def users_in(text: str) -> List[str]:
    """User names seen in home-directory paths (no domain known: see discover() for the rest).

    >>> users_in("/home/alice/x /Users/bob/y /home/root/z /home/carol@corp /home/CORP/dave/x")
    ['alice', 'bob', 'carol', 'dave', 'root']
    """
    redactor = Redactor()
    return sorted({m.group("homeuser") for m in redactor.home_paths(text)})


def hostname_from_uname(text: str) -> Optional[str]:
    """The nodename field of `uname -a`.

    >>> hostname_from_uname("Linux web1 6.1.0-18-amd64 #1 SMP x86_64 GNU/Linux")
    'web1'
    """
    words = text.split()
    return words[1] if len(words) > 1 and words[0] in ("Linux", "Darwin", "FreeBSD") else None


def hostname_from_bundle_name(name: str) -> Optional[str]:
    """The host part of flamediag-<host>-<UTC yyyymmddThhmmssZ>[...].

    >>> hostname_from_bundle_name("flamediag-db-7-20261122T031500Z.tar.gz")
    'db-7'
    """
    match = re.match(r"^flamediag-(.+?)-\d{8}T\d{6}Z", name)
    return match.group(1) if match else None


# -- whole bundles --------------------------------------------------------------------------
BINARY_SUFFIXES = (".data", ".bz2", ".xz", ".zst", ".tar", ".png", ".jpg", ".so", ".ko", ".bin", ".old")
SNIFF_BYTES = 64 * 1024
BLOCK = 4 * 1024 * 1024
MANIFEST_VERBATIM_KEYS = frozenset({"kernel", "flamediag_version", "arch", "start_utc", "end_utc", "schema"})


def is_binary_member(name: str, head: bytes) -> bool:
    """perf.data, archives and anything with a NUL byte cannot be redacted line by line."""
    base = name[:-3] if name.endswith(".gz") else name
    return base.endswith(BINARY_SUFFIXES) or ".data." in base or b"\x00" in head


# bytes no identifier (address, name, path) contains nor needs beside it: a block may end after one
_SAFE_CUT = re.compile(rb"[\s\x00-\x1f\"'(),;<>{}|=!?#$&*^`]")


def safe_cut(chunk: bytes) -> int:
    r"""Where a block of `chunk` may end so that no identifier is split: after the last newline, else
    after the last whitespace or quote/bracket/punctuation byte; 0 when there is no such place.

    >>> safe_cut(b"a 10.1.2.3\nb 10.1.2"), safe_cut(b"x=10.1.2.3 10.1.2"), safe_cut(b"10.1.2.3:22")
    (11, 11, 0)
    """
    cut = chunk.rfind(b"\n") + 1
    if cut:
        return cut
    found = _SAFE_CUT.search(chunk[::-1])       # the last safe byte: the first one from the end
    return len(chunk) - found.start() if found else 0


def text_blocks(stream, limit: int, first: bytes = b"") -> Iterable[bytes]:
    """`first` + the stream, in blocks that end at a newline (identifiers never span lines); a line
    longer than 4 blocks ends a block at the last safe_cut() place. A run of 4 blocks with no such
    place is refused (ValueError): cutting it anywhere could split an address in two halves that no
    pattern recognises."""
    carry = first
    total = len(first)
    while True:
        chunk = stream.read(BLOCK)
        total += len(chunk)
        if total > limit:
            raise ValueError(f"more than {limit} bytes")
        if not chunk:
            if carry:
                yield carry
            return
        chunk = carry + chunk
        cut = chunk.rfind(b"\n") + 1
        if cut == 0 and len(chunk) < BLOCK * 4:
            carry = chunk
            continue
        cut = cut or safe_cut(chunk)
        if not cut:
            raise ValueError(f"a line of more than {len(chunk)} bytes without a space or punctuation "
                             "cannot be redacted safely")
        carry = chunk[cut:]
        yield chunk[:cut]


def redact_bytes(redactor: Redactor, block: bytes) -> bytes:
    text = block.decode("utf-8", "surrogateescape")
    text = _CMDLINE_HEADER.sub(lambda m: m.group(1) + redactor.command_line(m.group(2)), text)
    return redactor.lines(text).encode("utf-8", "surrogateescape")


_CMDLINE_HEADER = re.compile(r"(?m)^(# cmdline : )(.*)$")
_PERF_HOST_HEADER = re.compile(r"(?m)^# hostname : (\S+)")


def redact_manifest(redactor: Redactor, manifest: dict) -> dict:
    """The manifest with every string redacted; host and command_line get their own rules."""
    out = {}
    host = manifest.get("host")
    if host is not None and not isinstance(host, str):
        host = json.dumps(host)          # a number or list as host still names the host: never kept
    if isinstance(host, str) and host.strip() and host.strip().lower() not in NOT_IDENTIFYING_HOSTS:
        out_host = redactor.token("hostnames", host.lower().strip().rstrip("."))    # numeric names too
    else:
        out_host = _redact_json(redactor, host)
    for key, value in manifest.items():
        if key == "host":
            out[key] = out_host
        elif key == "command_line" and isinstance(value, str):
            out[key] = redactor.text(redactor.command_line(value))
        elif key == "kernel" and isinstance(value, str):
            out[key] = redactor.kernel(value)      # a local release can carry the host name (5.15.0-web1)
        elif key in MANIFEST_VERBATIM_KEYS:
            out[key] = value
        else:
            out[key] = _redact_json(redactor, value)
    return out


def _redact_json(redactor: Redactor, value):
    if isinstance(value, str):
        return redactor.text(value)
    if isinstance(value, list):
        return [_redact_json(redactor, item) for item in value]
    if isinstance(value, dict):
        return {redactor.text(str(k)): _redact_json(redactor, v) for k, v in value.items()}
    return value


class RedactResult:
    def __init__(self):
        self.output = ""
        self.map_path = ""
        self.redactor: Optional[Redactor] = None
        self.dropped: List[str] = []       # binaries (by rule)
        self.failed: List[str] = []        # members that could not be read or redacted
        self.kept_binary: List[str] = []


MAX_HOME_PATHS = 200_000     # distinct /home/<x>[/<y>] prefixes kept for discovery (memory bound)


def discover(bundle) -> Dict[str, List[str]]:
    """Host names, domains and user names to replace, from the manifest, uname, the bundle name and
    all text: the domain of an FQDN seen anywhere for the host, resolv.conf `search`/`domain`, the
    domain part of /home/<user>@<domain>; users in every home-directory form."""
    host = bundle.manifest.get("host")
    hosts = [host if isinstance(host, str) else "" if host is None else json.dumps(host)]
    hosts.append(hostname_from_bundle_name(bundle.top or "") or "")
    uname = bundle.read_text("uname")
    if uname:
        hosts.append(hostname_from_uname(uname) or "")
    own_short = [h for h in expand_hostnames(hosts) if "." not in h and not h.isdigit()]
    own_fqdn = _own_fqdn_pattern(own_short)
    domains, homes = set(), set()
    for name in bundle.members:
        for block in _member_text_blocks(bundle, name):
            text = block.decode("utf-8", "surrogateescape")
            if len(homes) < MAX_HOME_PATHS:
                homes.update(m.group(0) for m in _HOME_SCAN.finditer(text))
            hosts.extend(_PERF_HOST_HEADER.findall(text))
            for line in _RESOLV_DOMAINS.findall(text):
                domains.update(line.split())
            if own_fqdn and _mentions(text, own_short):
                domains.update(m.group(1) for m in own_fqdn.finditer(text))
    for path in homes:           # /home/bob@corp, /home/CORP.EXAMPLE.COM/alice name domains
        parts = path.split("/")
        realm = parts[2] if len(parts) > 3 and parts[2].isupper() else ""
        domains.update(d for d in (parts[2].partition("@")[2], realm) if d)
    learned = Redactor(hosts, (), domains)
    users = {m.group("homeuser") for path in homes for m in learned.home_paths(path)}
    for key in ("user", "sudo_user"):
        if isinstance(bundle.manifest.get(key), str):
            users.add(bundle.manifest[key])
    return {"hostnames": [h for h in hosts if h], "users": sorted(users), "domains": sorted(domains)}


def _mentions(text: str, names: List[str]) -> bool:
    """A quick test before a slower search: does `text` hold one of `names` followed by a dot?"""
    lowered = text.lower()
    return any(f"{name}." in lowered for name in names)


def _own_fqdn_pattern(short: List[str]):
    """<short name>.<domain> for the host's own short names: the domain is group 1."""
    if not short:
        return None
    return re.compile(rf"(?i)(?<![\w.-])(?:{_alternation(short)})\.((?:[A-Za-z0-9_-]{{1,63}}\.){{1,10}}"
                      rf"[A-Za-z][A-Za-z0-9-]{{1,62}})(?![\w-]|\.\w)")


def _member_text_blocks(bundle, name: str) -> Iterable[bytes]:
    """Blocks of a text member (gunzipped); nothing for binaries or unreadable members."""
    import gzip
    from .safetar import limits

    try:
        with bundle.open_member(name) as raw:
            stream = gzip.GzipFile(fileobj=raw) if name.endswith(".gz") else raw
            head = stream.read(SNIFF_BYTES)
            if is_binary_member(name, head):
                return
            yield from text_blocks(stream, limits()["member"], head)
    except (OSError, EOFError, ValueError):
        return


def default_output(source: Path, redactor: Redactor) -> Path:
    """<input>-redacted.tar.gz beside the input, with the host name in the file name replaced."""
    name = source.name
    for suffix in (".tar.gz", ".tgz", ".tar"):
        if name.endswith(suffix):
            name = name[: -len(suffix)]
            break
    return source.parent / f"{redactor.text(name)}-redacted.tar.gz"


def redact_bundle(bundle, source: Path, out: Optional[Path], keep_binary: bool = False) -> RedactResult:
    """Write the redacted copy of an open bundle to `out` (+ `out`.map.json, mode 0600)."""
    import tempfile

    found = discover(bundle)
    redactor = Redactor(found["hostnames"], found["users"], found["domains"])
    result = RedactResult()
    result.redactor = redactor
    manifest = redact_manifest(redactor, bundle.manifest) if bundle.manifest else None
    top = redactor.text(bundle.top or source.name.split(".")[0]) or "flamediag-bundle"
    out = out or default_output(source, redactor)
    with tempfile.TemporaryDirectory(prefix="flamediag-redact-") as work:
        tree = Path(work) / "tree"
        tree.mkdir(mode=0o700)
        written = _redact_members(bundle, redactor, tree, keep_binary, result)
        manifest = _final_manifest(bundle, redactor, manifest, result)
        (tree / "manifest.json").write_bytes(_manifest_bytes(manifest))
        written["manifest.json"] = tree / "manifest.json"
        bundlewriter.write_sums(tree, written)
        bundlewriter.write_tarball(out, top, tree, sorted(written))
    result.output = str(out)
    result.map_path = str(out) + ".map.json"
    _write_private(Path(result.map_path), _mapping_json(redactor, source, out))
    return result


def _redact_members(bundle, redactor: Redactor, tree: Path, keep_binary: bool, result: RedactResult) -> Dict[str, Path]:
    import gzip

    written: Dict[str, Path] = {}
    for name in bundle.members:
        if name in ("manifest.json", "SHA256SUMS"):
            continue
        target_name = redactor.text(name)
        target = tree / target_name
        target.parent.mkdir(parents=True, exist_ok=True, mode=0o700)
        try:
            with bundle.open_member(name) as raw:
                stream = gzip.GzipFile(fileobj=raw) if name.endswith(".gz") else raw
                head = stream.read(SNIFF_BYTES)
                if is_binary_member(name, head):
                    if not keep_binary:
                        result.dropped.append(target_name)
                        continue
                    result.kept_binary.append(target_name)
                    _copy_verbatim(bundle, name, target)
                else:
                    _redact_stream(redactor, stream, head, target, gzipped=name.endswith(".gz"))
        except (OSError, EOFError, ValueError) as err:
            result.failed.append(f"{target_name} ({redactor.text(str(err))})")
            if target.exists():
                target.unlink()
            continue
        written[target_name] = target
    return written


def _redact_stream(redactor: Redactor, stream, head: bytes, target: Path, gzipped: bool) -> None:
    import gzip
    from .safetar import limits

    with open(target, "wb") as raw_out:
        out = gzip.GzipFile(fileobj=raw_out, mode="wb", mtime=0) if gzipped else raw_out
        try:
            for block in text_blocks(stream, limits()["member"], head):
                out.write(redact_bytes(redactor, block))
        finally:
            if gzipped:
                out.close()


def _copy_verbatim(bundle, name: str, target: Path) -> None:
    import shutil

    with bundle.open_member(name) as raw, open(target, "wb") as out:
        shutil.copyfileobj(raw, out)


def _final_manifest(bundle, redactor: Redactor, manifest: Optional[dict], result: RedactResult) -> dict:
    manifest = dict(manifest or {"schema": 1, "note": "source manifest missing or unparseable"})
    manifest["redaction"] = {
        "by": "flamediag redact",
        "replaced": redactor.summary(),
        "occurrences": dict(redactor.occurrences),
        "tokens": {"hostnames": "host-N", "domains": "domain-N", "ipv4": "10.255.x.y", "ipv6": "fd00:ff::N",
                   "mac": "02:00:00:00:xx:yy", "users": "user-N", "args": "arg-N",
                   "ipv6_prefix": "fd00:ff:N:: + the IPv4 token (IPv6 with an IPv4 inside)"},
        "kept": "loopback (127.0.0.0/8, ::1), 0.0.0.0, ::, netmasks 255.x, MAC 00:00:00:00:00:00 and "
                "ff:ff:ff:ff:ff:ff, ::ffff: and 64:ff9b:: before an IPv4, version strings, kernel version "
                "(less a host name in it), frame and comm names",
        "dropped": result.dropped,
        "dropped_reason": "binary files cannot be redacted (use --keep-binary to keep them unredacted)",
        "kept_binary_unredacted": result.kept_binary,
        "failed": result.failed,
        "unverified_in_source": sorted(redactor.text(n) for n in bundle.unverified),
        "source_problems": _capped([redactor.text(p) for p in bundle.problems]),
        "map": "kept beside the redacted bundle, never inside it",
    }
    return manifest


MAX_SOURCE_PROBLEMS = 100


def _capped(problems: List[str]) -> List[str]:
    if len(problems) <= MAX_SOURCE_PROBLEMS:
        return problems
    return problems[:MAX_SOURCE_PROBLEMS] + [f"{len(problems) - MAX_SOURCE_PROBLEMS} more problems (not copied)"]


def _manifest_bytes(manifest: dict) -> bytes:
    """The redacted manifest, always readable by the bundle reader: when the source's own fields
    would push it past the reader's size limit, only the redaction record is kept (it carries the
    unverified marks, which must survive redaction)."""
    from .bundle import MAX_MANIFEST_BYTES

    def encode(doc: dict) -> bytes:
        return (json.dumps(doc, indent=1, ensure_ascii=False) + "\n").encode("utf-8", "surrogateescape")

    data = encode(manifest)
    if len(data) <= MAX_MANIFEST_BYTES:
        return data
    return encode({"schema": manifest.get("schema", 1), "redaction": manifest["redaction"],
                   "note": "source manifest too large to carry: only the redaction record is kept"})


def _write_private(path: Path, data: bytes) -> None:
    """Create with mode 0600 from the start (never world-readable, even briefly)."""
    import os
    import tempfile

    fd, partial = tempfile.mkstemp(prefix=f".{path.name}.", dir=str(path.parent))
    try:
        os.fchmod(fd, 0o600)
        with os.fdopen(fd, "wb") as out:
            out.write(data)
        os.replace(partial, path)
    except BaseException:
        if os.path.exists(partial):
            os.unlink(partial)
        raise


def _mapping_json(redactor: Redactor, source: Path, out: Path) -> bytes:
    doc = {"source": source.name, "redacted_bundle": out.name,
           "note": "PRIVATE: original value -> token. Do not attach this file to the ticket.",
           **{kind: dict(redactor.maps[kind]) for kind in KINDS}}
    return (json.dumps(doc, indent=1, ensure_ascii=False) + "\n").encode("utf-8", "surrogateescape")
