"""The service models and endpoint rules are parsed once per process: every session that
resolves, checks or calls (the command line resolves before it polls, the palette resolves each
switch, the class view one session per profile) reads them from one data loader. Each parse of
the lab's services is several MB of JSON: a second resolve that parsed them again cost
`awsview verify` a third of its CPU."""

from __future__ import annotations

import botocore.loaders

from awsview.aws.session import Target, aio_session, botocore_session, resolve

LOCAL = Target(region="us-east-1", endpoint_url="http://127.0.0.1:4566")


def test_a_second_resolve_parses_no_model_again(monkeypatch):
    resolve(LOCAL)  # this process may have parsed them already: then nothing is parsed here
    parsed: list[str] = []
    load_file = botocore.loaders.JSONFileLoader.load_file

    def counting(self, file_path):
        parsed.append(file_path)
        return load_file(self, file_path)

    monkeypatch.setattr(botocore.loaders.JSONFileLoader, "load_file", counting)
    resolve(LOCAL)
    resolve(Target(region="eu-west-1", endpoint_url="http://127.0.0.1:4566"))
    assert parsed == []


def test_sync_and_async_sessions_of_any_profile_share_the_loader(tmp_path, monkeypatch):
    config = tmp_path / "config"
    config.write_text("[profile other]\nregion = eu-west-1\n")
    monkeypatch.setenv("AWS_CONFIG_FILE", str(config))
    loaders = {
        id(session.get_component("data_loader"))
        for session in (botocore_session(), botocore_session("other"), aio_session("other"))
    }
    assert len(loaders) == 1


def test_a_data_path_of_its_own_gets_a_loader_of_its_own(tmp_path, monkeypatch):
    shared = botocore_session().get_component("data_loader")
    monkeypatch.setenv("AWS_DATA_PATH", str(tmp_path))
    own = botocore_session().get_component("data_loader")
    assert own is not shared and str(tmp_path) in own.search_paths
