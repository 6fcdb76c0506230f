"""Installs sonnet_like: `pip install .` (add `[test]`, `[examples]`, `[rl]`,
`[atari]`, `[mujoco]`, `[mlflow]`, `[docs]`)."""

import pathlib
import re

import setuptools

_HERE = pathlib.Path(__file__).parent
# The package's own version (`snt.__version__` is the Sonnet API version
# with it as a local label).
_VERSION = re.search(r'__sonnet_like_version__ = "([^"]+)"',
                     (_HERE / "sonnet_like" / "__init__.py").read_text())[1]

setuptools.setup(
    name="sonnet_like",
    version=_VERSION,
    description=("Neural-network modules in the style of Sonnet 2, with "
                 "training scenarios (supervised, GAN, RL) on TensorFlow 2."),
    long_description=(_HERE / "README.md").read_text(),
    long_description_content_type="text/markdown",
    license="Apache-2.0",
    packages=setuptools.find_packages(include=["sonnet_like", "sonnet_like.*"]),
    package_data={"sonnet_like": ["py.typed"]},
    python_requires=">=3.10",
    install_requires=[
        # The tested range. CI runs the tests of the code behind TensorFlow's
        # internals (sonnet_like/core/tf_private/) on both ends, pinned by
        # .ci/tf_floor.txt (2.16.2) and .ci/tf_nightly.txt (tf-nightly
        # 2.23.0.dev, ahead of the newest release, 2.21, that the whole suite
        # runs on); the bound is the minor after the newest tested, 2.23.
        "tensorflow>=2.16,<2.24",
        # tensorflow-probability needs tf-keras under Keras 3.
        "tensorflow-probability>=0.24",
        "tf-keras>=2.16",
        "absl-py",
        "numpy",
        # The default progress bar of every scenario.
        "tqdm",
    ],
    extras_require={
        # Sphinx: tests/test_docs.py checks the docs' reference extension.
        # mlflow: the MLflowLogger is tested against a real local store.
        # ale-py, OpenCV: snt.envs.atari against gymnasium's wrappers.
        # mujoco: the MuJoCo recipes run a few hundred steps.
        "test": ["pytest", "pytest-xdist>=3.2", "scikit-learn", "matplotlib",
                 "gymnasium[mujoco]>=1.0", "dm-sonnet==2.0.2", "sphinx>=7.2",
                 "mlflow", "ale-py>=0.9", "opencv-python-headless",
                 "mujoco>=3.0"],
        # tensorboard: views the logs the examples write (`--logdir`).
        "examples": ["scikit-learn", "matplotlib", "gymnasium", "tensorboard"],
        # snt.scenarios.MLflowLogger.
        "mlflow": ["mlflow"],
        "rl": ["gymnasium"],
        # snt.envs.atari: the emulator (ROMs in its wheel) and OpenCV's
        # area resize, which gymnasium's and SB3's Atari wrappers use too.
        "atari": ["ale-py>=0.9", "gymnasium>=1.0", "opencv-python-headless"],
        # The MuJoCo tasks of gymnasium (HalfCheetah-v5, Hopper-v5, ...)
        # that the SAC, TD3 and PPO recipes train on: the physics engine,
        # and gymnasium's extra for its environments (imageio, ...).
        "mujoco": ["gymnasium[mujoco]>=1.0", "mujoco>=3.0"],
        # s3:// save_dirs: tensorflow-io registers the file system.
        "s3": ["tensorflow-io"],
        # docs/build.sh: Sphinx with Markdown guides and the Furo theme.
        "docs": ["sphinx>=7.2", "myst-parser>=2.0", "furo>=2023.9.10"],
    },
    classifiers=[
        "Programming Language :: Python :: 3",
        "Topic :: Scientific/Engineering :: Artificial Intelligence",
    ],
)
