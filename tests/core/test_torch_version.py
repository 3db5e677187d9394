"""skpmlp refuses, when imported, a torch older than its engine needs."""

import configparser
import importlib
import re
from pathlib import Path

import pytest
import torch

import skpmlp
from skpmlp._core._torch_version import MIN_TORCH, check_torch_version


@pytest.mark.parametrize("version", ["2.4.0", "2.4.1+cpu", "2.5.0a0+git1234", "2.13.0+cu128", "3.0.0"])
def test_supported_torch_passes(version):
    check_torch_version(version)


@pytest.mark.parametrize("version", ["1.13.1", "2.1.0", "2.3.1+cpu", "2.3.0a0+gitabc"])
def test_older_torch_is_refused_naming_both_versions(version):
    message = rf"requires torch >= 2\.4 .* torch {re.escape(version)} is installed"
    with pytest.raises(ImportError, match=message):
        check_torch_version(version)


def test_importing_skpmlp_checks_the_installed_torch(monkeypatch):
    with monkeypatch.context() as patch:
        patch.setattr(torch, "__version__", "2.3.1")
        with pytest.raises(ImportError, match=r"torch 2\.3\.1 is installed"):
            importlib.reload(skpmlp)
    importlib.reload(skpmlp)  # the real version again: a complete module


def test_setup_cfg_asks_for_the_same_torch():
    setup_cfg = Path(skpmlp.__file__).resolve().parents[1] / "setup.cfg"
    if not setup_cfg.exists():
        pytest.skip("not running from a source tree")
    config = configparser.ConfigParser()
    config.read(setup_cfg)
    requires = config["options"]["install_requires"].split()
    assert f"torch>={'.'.join(map(str, MIN_TORCH))}" in requires
