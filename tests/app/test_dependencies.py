"""Routes take the app's services as FastAPI dependencies (app/dependencies.py), so a test can
hand a route another: what a route uses is its parameters, not whatever app.state holds."""

from fastapi.testclient import TestClient

from app.config import Settings, StoreSettings
from app.dependencies import get_settings, get_traces
from app.main import create_app


class OneTrace:
    """Traces that know one id, and remember who asked for it."""

    def __init__(self) -> None:
        self.asked: list = []

    def fetch_json(self, ident, viewer=None):
        self.asked.append((ident, viewer))
        return '{"stdout": "from the stand-in"}' if ident == "known" else None


def test_a_route_uses_the_traces_it_is_handed(tmp_path):
    app = create_app(Settings(store=StoreSettings(path=tmp_path / "traces.db")))
    stand_in = OneTrace()
    app.dependency_overrides[get_traces] = lambda: stand_in
    client = TestClient(app, base_url="http://localhost")
    assert client.get("/api/traces/known").json() == {"stdout": "from the stand-in"}
    assert client.get("/api/traces/other").status_code == 404
    assert [ident for ident, _ in stand_in.asked] == ["known", "other"]
    assert all(viewer is not None for _, viewer in stand_in.asked)  # the requester, named


def test_a_route_uses_the_settings_it_is_handed(tmp_path):
    app = create_app(Settings(store=StoreSettings(path=tmp_path / "traces.db")))
    tight = Settings(store=StoreSettings(path=tmp_path / "traces.db"))
    tight = tight.model_copy(update={"sandbox": type(tight.sandbox)(max_source_bytes=10)})
    app.dependency_overrides[get_settings] = lambda: tight
    client = TestClient(app, base_url="http://localhost")
    refused = client.post("/api/traces", json={"code": "print('eleven chars')"})
    assert refused.status_code == 413 and "the limit is 10" in refused.json()["detail"]
