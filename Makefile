# flamediag — see README.md.  Quick start: `make demo`, `make test`.
SHELL := /bin/bash
PREFIX ?= /usr/local
PYTHON ?= python3
VENV := .venv
VPY := $(VENV)/bin/python

# Debian packages capture and the tests drive (see README "Dependencies").
DEB_PACKAGES := linux-perf sysstat numactl iproute2 ethtool bats bats-assert bats-support \
	bats-file bpfcc-tools bpftrace stress-ng shellcheck chromium gcc make procps util-linux kmod \
	openssh-server sudo

.PHONY: demo test test-only venv venv-dev deps install uninstall dist deb lab fleet-demo catalog bench samples docs accuracy clean help

help:
	@echo "make demo     set up .venv (diagnosis deps) and diagnose samples/zone-reclaim*"
	@echo "make test     install capture/test deps, run shellcheck + bats + pytest"
	@echo "make lab      run the live-lab scenarios alone (root) and print a table"
	@echo "make fleet-demo  real Ansible over real SSH to 3 local hosts: capture on all, fetch, summary (root)"
	@echo "make catalog  list the playbooks (id, title, kernel eras, evidence)"
	@echo "make bench    run the benchmarks in bench/"
	@echo "make samples  regenerate samples/ from samples/specs/"
	@echo "make docs     regenerate the collector table of doc/bundle-format.md from lib/collectors.tsv"
	@echo "make accuracy diagnose the real-world corpus (test/fixtures/realworld/), one row per case"
	@echo "make install PREFIX=/usr/local"
	@echo "make dist     dist/: sdist + wheel (pip install), the bash-only capture kit, SHA256SUMS"
	@echo "make deb      dist/flamediag_<version>_all.deb (dpkg-deb): /usr/lib/flamediag, /usr/bin/flamediag"

# --- environments ------------------------------------------------------------------
$(VPY):
	@$(PYTHON) -m venv $(VENV) 2>/dev/null || { \
	  if [ "$$(id -u)" = 0 ] && command -v apt-get >/dev/null; then \
	    echo "make: installing python3-venv"; \
	    apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq python3-venv >/dev/null; \
	    rm -rf $(VENV); $(PYTHON) -m venv $(VENV); \
	  else echo "ERROR: cannot create $(VENV). Install python3-venv (apt-get install python3-venv)" >&2; exit 1; fi; }

$(VENV)/.runtime-ok: requirements.txt | $(VPY)
	@$(VPY) -m pip install -q --disable-pip-version-check -r requirements.txt
	@touch $@

$(VENV)/.dev-ok: requirements-dev.txt requirements.txt test/browser/package-lock.json | $(VPY)
	@$(VPY) -m pip install -q --disable-pip-version-check -r requirements-dev.txt
	@# the speedscope viewer the browser test loads offline (skipped with the reason without npm)
	@if command -v npm >/dev/null; then npm ci --prefix test/browser --no-audit --no-fund --silent; \
	  else echo "make: npm not found: the speedscope viewer test will be skipped (apt-get install npm)"; fi
	@touch $@

venv: $(VENV)/.runtime-ok
venv-dev: $(VENV)/.dev-ok

deps:
	@bash test/install-deps $(DEB_PACKAGES)

# --- the two quick-start commands ----------------------------------------------------
demo: venv
	@bash test/demo

test: deps venv-dev
	@bash test/run

# run the suites without the install steps (inner loop)
test-only:
	@bash test/run

lab: venv-dev
	@bash test/live/lab

# doc/fleet.md: sshd on 127.0.0.1 ports in their own UTS namespaces, a temporary user, Ansible from .venv
fleet-demo: deps venv-dev
	@bash test/fleet/fleet-demo

catalog: venv
	@bin/flamediag playbooks

# regenerate the synthetic sample bundles from samples/specs/ (deterministic; review the diff)
samples: venv
	@for s in samples/specs/*.yaml; do $(VPY) samples/tools/make-sample "$$s" || exit 1; done

# regenerate the tables the docs take from lib/collectors.tsv (the suite fails until they agree)
docs:
	@PYTHONPATH=lib $(PYTHON) -m flamediag.collectors doc/bundle-format.md

bench: venv-dev
	@for b in bench/*; do [ -x "$$b" ] && [ -f "$$b" ] && { echo "== $$b"; "$$b" || exit 1; }; done; true

# --- install ---------------------------------------------------------------------------
install:
	@bash lib/install.bash "$(PREFIX)"

uninstall:
	rm -rf "$(PREFIX)/lib/flamediag" "$(PREFIX)/bin/flamediag"

# --- packages (doc/install.md) -----------------------------------------------------------
VERSION := $(shell cat lib/VERSION)

dist: venv-dev
	@rm -rf dist/flamediag-$(VERSION).tar.gz dist/flamediag-$(VERSION)-py3-none-any.whl dist/flamediag-capture-$(VERSION).tar.gz
	@$(VPY) -m build --outdir dist . >dist-build.log 2>&1 || { tail -n 20 dist-build.log >&2; exit 1; }
	@rm -rf dist-build.log build lib/flamediag.egg-info
	@bash packaging/capture-kit.bash dist >/dev/null
	@cd dist && sha256sum flamediag-$(VERSION).tar.gz flamediag-$(VERSION)-py3-none-any.whl flamediag-capture-$(VERSION).tar.gz >SHA256SUMS
	@ls -1 dist/flamediag-$(VERSION).tar.gz dist/flamediag-$(VERSION)-py3-none-any.whl dist/flamediag-capture-$(VERSION).tar.gz dist/SHA256SUMS

deb:
	@command -v dpkg-deb >/dev/null || { echo "make deb: dpkg-deb not found (Debian/Ubuntu: apt-get install dpkg)" >&2; exit 1; }
	@bash packaging/deb.bash dist

clean:
	rm -rf $(VENV) .pytest_cache test-artifacts build dist lib/flamediag.egg-info

# the sets `make accuracy` totals after the corpus, `directory|label;...` (the ones at 100 %; the
# others are reported in doc/accuracy.md); a label's parenthesised part is left out of its evidence line
ACCURACY_SETS := realworld-heldout|held-out set;realworld-probe-old|probe set 2.6.18-4.4;\
realworld-probe-a|probe set A (network, storage, fs, virt, containers);realworld-probe-new|probe set 4.9-6.x;\
realworld-probe-d|probe set D (non-x86, virtualised, non-perf tools);\
realworld-probe-h|probe set H (mailing-list threads, 2.6.21-4.6);realworld-probe-i|probe set I (question sites, forums, blog posts);\
realworld-probe-l|probe set L (kernels 6.1-6.16);\
realworld-probe-n|probe set N (lockup, stall and crash traces);\
realworld-probe-w|probe set W (non-English sources);\
realworld-probe-x|probe set X (fix commits of older kernels, projects next to the kernel);\
realworld-probe-ac|probe set AC (distribution trackers, kernels 5.14-6.12);\
realworld-probe-ae|probe set AE (GitHub and GitLab issues of projects, kernels 4.9-6.4);\
realworld-probe-ag|probe set AG (healthy profiles, out-of-catalog costs);\
realworld-probe-ak|probe set AK (ticket-system and chat-tool layouts);\
realworld-probe-an|probe set AN (healthy profiles, out-of-catalog costs, round three);\
realworld-probe-ao|probe set AO (renamed frames of each kernel era, 2.6.18-6.13);\
realworld-probe-al|probe set AL (third twin of the corpus, kernels 2.6.18-4.4);\
realworld-probe-g|probe set G (infrastructure project discussions on GitHub);\
realworld-probe-aq|probe set AQ (bug-tracker twin of the corpus, kernels 3.2-5.15);\
realworld-probe-au|probe set AU (least-tested problems of the catalog, kernels 2.6.32-6.1);\
realworld-probe-az|probe set AZ (blogs, notes repositories and READMEs, kernels 2.6.32-5.15);\
realworld-probe-ay|probe set AY (healthy profiles, out-of-catalog costs, round four);\
realworld-probe-bc|probe set BC (healthy busy servers, round five);\
realworld-probe-q|probe set Q (netdev, linux-block, fsdevel, nfs and io-uring threads);\
realworld-probe-bd|probe set BD (fix commits of 3.10-6.16 quoting the evidence);\
realworld-probe-bf|probe set BF (virtualisation hosts and guests, kernels 2.6.32-6.5);\
realworld-probe-be|probe set BE (eighth twin of the corpus, kernels 2.6.18-6.2);\
realworld-probe-bj|probe set BJ (healthy profiles with alarming evidence, round seven);\
realworld-probe-bh|probe set BH (ninth twin of the corpus, profiles quoted in mail replies, kernels 2.6.18-5.12);\
realworld-probe-bn|probe set BN (tool documentation, benchmark READMEs and teaching material, round eight);\
realworld-probe-bp|probe set BP (thirteenth twin of the corpus, project issue trackers and engineering blogs, kernels 3.10-5.15);\
realworld-probe-bg|probe set BG (healthy profiles in rich layouts, round six);\
realworld-probe-bo|probe set BO (twelfth twin of the corpus, mailing-list threads, kernels 2.6.29-6.11);\
realworld-probe-bs|probe set BS (fifteenth twin of the corpus, mixed sources, kernels 2.6.18-6.8);\
realworld-probe-bx|probe set BX (healthy busy servers and their alarming look-alikes, round nine);\
realworld-probe-bi|probe set BI (tenth twin of the corpus, distribution trackers and vendor knowledge bases, kernels 2.6.32-5.4);\
realworld-probe-ca|probe set CA (twentieth twin of the corpus, fix commits and patch cover letters, kernels 2.6.32-6.12);\
realworld-probe-bw|probe set BW (nineteenth twin of the corpus, issue trackers and question sites, kernels 3.10-5.15);\
realworld-probe-cc|probe set CC (twenty-first twin of the corpus, mixed sources, kernels 2.6.18-6.5);\
realworld-probe-cj|probe set CJ (twenty-fifth twin of the corpus, question sites, vendor knowledge bases and engineering blogs, kernels 2.6.32-5.15);\
realworld-probe-ch|probe set CH (twenty-fourth twin of the corpus, mixed sources, kernels 2.6.18-6.13);\
realworld-probe-cn|probe set CN (half healthy, round three: false alarms among still other look-alikes);\
realworld-probe-aa|probe set AA (the catalog's rarer problems and their look-alikes);\
realworld-probe-cm|probe set CM (twenty-sixth twin of the corpus, mixed sources, kernels 2.6.18-6.17-rc);\
realworld-probe-ct|probe set CT (thirtieth twin of the corpus, subsystem lists and vendor trackers, kernels 2.6.32-6.8)

# real-world corpus: one row per case (format read, expected, got, confidence, share) and the totals;
# then the totals of the held-out set (reported, never tuned to)
accuracy: venv
	@$(VPY) test/accuracy; $(VPY) test/accuracy --evidence | tail -n 1 | sed 's/^/with evidence: /'
	@echo '$(subst ','\'',$(ACCURACY_SETS))' | tr ';' '\n' | sed 's/^ *//' | while IFS='|' read -r set label; do \
		$(VPY) test/accuracy --cases test/fixtures/$$set | tail -n 1 | sed "s|^|$$label: |"; \
		$(VPY) test/accuracy --evidence --cases test/fixtures/$$set | tail -n 1 | sed "s|^|$${label%% (*} with evidence: |"; \
	done
