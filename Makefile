# Two commands set everything up on a fresh machine: `make demo` and `make test`.
PY ?= python3
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed

.PHONY: demo test test-long lint stress bench bench-scale docs docs-screenshots install jvm paimon azurite wheel clean

$(STAMP): pyproject.toml requirements-lock.txt
	@command -v java >/dev/null 2>&1 || { echo "error: Java 17 is required (install openjdk-17-jre-headless or set JAVA_HOME)"; exit 1; }
	@test -x $(BIN)/python || $(PY) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip
	$(BIN)/python -m pip install --quiet -c requirements-lock.txt -e '.[test]' --config-settings editable_mode=compat
	@touch $(STAMP)

install: $(STAMP)

demo: $(STAMP)
	$(BIN)/icefloe --warehouse $${WAREHOUSE:-warehouse} demo --fresh

test: lint jvm paimon azurite
	$(BIN)/python -m pytest -q --durations=25 tests

# The Java engines, Apache Iceberg's and Apache Paimon's Spark runtimes (Spark 3.5), in their own environment,
# .venv-jvm: test oracles and the benchmark's peer (tools/jvm_runtime.py; pyspark pinned in requirements-jvm.txt,
# the jars fetched from Maven Central by mvn, pinned with their SHA-256 in jvm-jars.txt, cached in ~/.cache/icefloe/jars);
# and Paimon's Java engine without Spark (paimon-bundle, in a JVM of its own: tools/paimon_java.py, its program compiled here),
# and Iceberg's REST Compatibility Kit binding (tools/rck/src) compiled against the pinned jars (tools/rck.py).
jvm: $(STAMP)
	$(BIN)/python tools/jvm_runtime.py
	$(BIN)/python tools/rck.py

# pypaimon in its own environment, .venv-paimon: it requires pyarrow<20 and icefloe a newer one. The tests
# and the benchmark reach it through proxies (tools/pypaimon_env.py; pinned in requirements-paimon.txt).
paimon: $(STAMP)
	$(BIN)/python tools/pypaimon_env.py

# Azurite, the Azure Storage emulator the az:// and abfs:// tests run against (Node.js and npm; the
# version pinned in tools/azurite/package-lock.json, installed in tools/azurite/node_modules).
AZURITE := tools/azurite/node_modules/.bin/azurite-blob
$(AZURITE): tools/azurite/package.json tools/azurite/package-lock.json
	npm ci --prefix tools/azurite --no-audit --no-fund --loglevel=error
	@touch $@

azurite: $(AZURITE)

# The architecture's rules, executable: import layers and no cycles (import-linter, imports
# inside functions included), lint (ruff), no module over 800 lines, no reach into a table's, SQL
# session's or catalog's private attributes from another module, and the type checker (pyright,
# [tool.pyright] in pyproject.toml). The pyright wheel carries its own JavaScript, run by the machine's
# Node.js; PYRIGHT_PYTHON_IGNORE_WARNINGS keeps it from asking PyPI for a newer version.
lint: $(STAMP)
	@command -v node >/dev/null 2>&1 || { echo "error: Node.js is required by the type checker (install nodejs)"; exit 1; }
	$(BIN)/lint-imports
	$(BIN)/ruff check icefloe tests bench tools
	$(BIN)/python tools/module_size.py icefloe
	$(BIN)/python tools/private_reach.py icefloe
	PYRIGHT_PYTHON_IGNORE_WARNINGS=1 $(BIN)/pyright --warnings

# The wheel, in dist/, with icefloe's JVM extension compiled into it (setup.py): built in the venv,
# whose pyspark the extension is compiled against (pyspark is too large for an isolated build).
wheel: $(STAMP)
	$(BIN)/python -m pip install --quiet -c requirements-lock.txt wheel
	$(BIN)/python -m pip wheel --quiet --no-build-isolation --no-deps -w dist .

# The long runs (marker `long`: real clusters, crash loops, reference-engine rounds), kept out of make test's
# 25 minutes; .ci/run runs them after make test.
test-long: jvm paimon azurite
	$(BIN)/python -m pytest -q --durations=15 -m long tests

stress: $(STAMP)
	$(BIN)/python -m pytest -q -m stress tests

# The documentation site (docs/, mkdocs.yml) into site/; warnings are errors. Its examples run in make test.
# Material for MkDocs, no web fonts, no CDN: the built site works offline (Mermaid is the pinned file
# docs/assets/javascripts/mermaid.min.js, checked against its .sha256 by tests/docs).
docs: $(STAMP)
	NO_MKDOCS_2_WARNING=1 $(BIN)/mkdocs build --strict

# The main pages in headless Chromium (Debian's chromium package), each checked to render (title,
# navigation, highlighted code, drawn diagrams); PNGs in site-screenshots/.
docs-screenshots: docs
	@command -v chromium >/dev/null 2>&1 || { apt-get update -qq && apt-get install -y -qq chromium; } || \
		{ echo "error: Debian's chromium is needed (apt-get install chromium)"; exit 1; }
	$(BIN)/python tools/docs_screenshots.py site site-screenshots

bench: $(STAMP) jvm paimon
	$(BIN)/python -m bench.run

# Planning at scale (not part of make bench): metadata-only tables of SCALE_FILES data files, planned
# cold and warm by icefloe, Apache Iceberg's Java runtime and pyiceberg (Iceberg), Apache Paimon's Java engine
# and pypaimon (Paimon), each in its own process (bench/scale.py, bench/scale_paimon.py); then one-file commits to
# Iceberg, Paimon append and Paimon primary-key tables of COMMIT_SCALE_FILES files, icefloe against the Java
# runtimes (bench/commit_scale.py); then MERGE, DELETE, UPDATE and the read after them on tables of
# ROWLEVEL_ROWS rows (copy-on-write, merge-on-read v2 and v3), icefloe against Iceberg's Java runtime with the
# same driver memory and the same off-heap limit (ROWLEVEL_DIRECT_MEMORY: with the default, the heap's 2g, the
# Java runtime's v3 MERGE of 100M rows runs out of direct buffers), each side's peak RSS reported
# (bench/rowlevel_scale.py; 100M rows took 40 minutes on a busy 2-core machine)
SCALE_FILES ?= 100000
COMMIT_SCALE_FILES ?= 10000 100000 1000000
ROWLEVEL_ROWS ?= 100000000
ROWLEVEL_DIRECT_MEMORY ?= 6g
bench-scale: $(STAMP) jvm paimon
	$(BIN)/python -m bench.scale --files $(SCALE_FILES)
	$(BIN)/python -m bench.commit_scale --files $(COMMIT_SCALE_FILES)
	$(BIN)/python -m bench.rowlevel_scale --rows $(ROWLEVEL_ROWS) --direct-memory $(ROWLEVEL_DIRECT_MEMORY)

clean:
	rm -rf $(VENV) build dist .venv-jvm .venv-paimon warehouse .pytest_cache site site-screenshots tools/azurite/node_modules
