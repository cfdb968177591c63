# Shared environment for chunkwise scripts (sourced, not run).
export CHUNKWISE_VENV="${CHUNKWISE_VENV:-$HOME/.cache/chunkwise/venv}"
export PATH="$HOME/.cargo/bin:$PATH"
export CHROMEDRIVER="${CHROMEDRIVER:-/usr/bin/chromedriver}"
