"""What `import sonnet_like` needs and what it pulls in, in a fresh
interpreter: it imports without the optional packages (matplotlib for
curves, mlflow for MLflowLogger, tensorboard for viewing only), and it does
not import TensorFlow Probability (seconds of import; only a policy's
distribution needs it). One process for both: `import tensorflow` alone is
~4 s of CPU."""

import subprocess
import sys

import tests

_CODE = """
import sys
for name in ('matplotlib', 'mlflow', 'tensorboard'):
  sys.modules[name] = None  # Their import fails.
import sonnet_like
print(sonnet_like.scenarios.History.__name__)
print('tensorflow_probability' in sys.modules)
"""


def test_sonnet_like_imports_without_the_optional_packages_and_tfp():
  result = subprocess.run([sys.executable, "-c", _CODE], capture_output=True,
                          text=True, check=False, cwd=tests.ROOT)
  assert result.returncode == 0, result.stderr[-2000:]
  assert result.stdout.split() == ["History", "False"]
