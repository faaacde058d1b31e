# The two commands a newcomer needs: `make serve` and `make test`.
PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed

# Debian's headless build of Chromium, which the browser tests drive (tests/chromium.py says why)
CHROMIUM ?= /usr/bin/chromium-headless-shell
export GRADTRACE_CHROMIUM := $(CHROMIUM)

.PHONY: install system-libs browser nginx postgres serve test test-fast lint bench goldens clean

install: $(STAMP) system-libs

# Image exports (PNG, PDF, GIF) are drawn by Cairo, which CairoSVG finds on the system, in the
# fonts the system has: Debian's libcairo2 and DejaVu. As root they are installed if missing;
# otherwise the app runs without them and says what image exports need.
system-libs:
	@if ! ldconfig -p | grep -q 'libcairo.so.2' || ! fc-list 2>/dev/null | grep -qi dejavu; then \
	  if [ "$$(id -u)" = 0 ]; then \
	    apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq libcairo2 fonts-dejavu-core fontconfig; \
	  else \
	    echo "Image exports need Cairo and fonts: sudo apt-get install libcairo2 fonts-dejavu-core"; \
	  fi; \
	fi

$(STAMP): pyproject.toml constraints.txt
	test -d $(VENV) || $(PYTHON) -m venv $(VENV)
	$(BIN)/pip install -q --upgrade pip
	$(BIN)/pip install -q -c constraints.txt -e '.[dev]'
	touch $(STAMP)

# Browser tests drive Debian's Chromium (Playwright's own download does not work here), with the
# fonts Debian's desktop Chromium brings: Liberation, which the tests' label sizes were measured in.
browser:
	@if [ ! -x $(CHROMIUM) ] || ! fc-list 2>/dev/null | grep -q 'Liberation Sans'; then \
	  if [ "$$(id -u)" = 0 ]; then \
	    apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq chromium-headless-shell fonts-liberation; \
	  else \
	    echo "Browser tests need Chromium at $(CHROMIUM): sudo apt-get install chromium-headless-shell fonts-liberation"; exit 1; \
	  fi; \
	fi

# The deployment test (tests/deploy) puts Debian's nginx in front of two servers; only the binary
# is used: the test runs nginx itself, never the system service the package may start.
nginx:
	@if ! command -v nginx >/dev/null && [ ! -x /usr/sbin/nginx ]; then \
	  if [ "$$(id -u)" = 0 ]; then \
	    apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq nginx-light; \
	  else \
	    echo "The deployment test needs nginx: sudo apt-get install nginx-light"; exit 1; \
	  fi; \
	fi

# The store's tests run on PostgreSQL too, each test process in a throwaway cluster of its own
# (tests/postgres.py): only the binaries are used (Debian's images keep the service from starting).
postgres:
	@if ! command -v initdb >/dev/null && ! ls /usr/lib/postgresql/*/bin/initdb >/dev/null 2>&1; then \
	  if [ "$$(id -u)" = 0 ]; then \
	    apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq postgresql; \
	  else \
	    echo "The store's tests need PostgreSQL: sudo apt-get install postgresql"; exit 1; \
	  fi; \
	fi

# an installed server keeps its data in the user's data folder; a checkout's, in its own data/
serve: install
	GRADTRACE_DATA_DIR=$(CURDIR)/data $(BIN)/gradtrace serve --host 127.0.0.1 --port 8000

# Python and pytest keep compiled (and assertion-rewritten) modules as bytecode between runs:
# a later run collects in half the time. Some shells turn that off; the tests want it on.
unexport PYTHONDONTWRITEBYTECODE

# The whole suite on every core (pytest-xdist; the finite-difference checks and their coverage
# check are one group), then the tests marked `alone`, which flood the machine, by themselves.
PARALLEL := -n auto --dist loadgroup --durations=15
# the files that hold `alone` tests, so that their run collects nothing else
ALONE_FILES = $(shell grep -rl --include='test_*.py' 'mark\.alone' tests)

test: install browser nginx postgres
	$(BIN)/ruff check .
	$(BIN)/ruff format --check .
	$(BIN)/python -m pytest $(PARALLEL) -m "not alone"
	$(BIN)/python -m pytest -m alone $(ALONE_FILES)

# The edit-run loop: everything but the browser, the slow and the machine-flooding tests.
test-fast: install postgres
	$(BIN)/python -m pytest $(PARALLEL) -m "not browser and not slow and not alone"

lint: install
	$(BIN)/ruff check .
	$(BIN)/ruff format --check .

bench: install browser
	$(BIN)/python bench/engine.py
	$(BIN)/python bench/sandbox.py
	$(BIN)/python bench/render.py
	$(BIN)/python bench/server.py
	$(BIN)/python bench/player.py
	$(BIN)/python bench/live.py
	$(BIN)/python bench/export.py

# Re-record golden files from real PyTorch (needs torch 2.13.0; not needed by the tests).
goldens:
	test -d .venv-torch || $(PYTHON) -m venv .venv-torch
	.venv-torch/bin/pip install -q torch==2.13.0 numpy
	for script in tools/record_*.py; do .venv-torch/bin/python $$script || exit 1; done

clean:
	rm -rf $(VENV) .pytest_cache build dist *.egg-info
