"""Redaction (preflight.redact) over the names real launch scripts use, and URL credentials in every output.

The names below were taken from public launch and setup scripts (repository: path) or, where marked, from the
documentation of the tool that reads them. ``tests/test_security_cluster.py`` runs every command on the namespace
cluster; these tests need no cluster: explain reads a log, diagnose meets a closed port.
"""

from __future__ import annotations

import json
from pathlib import Path

from cli_runner import preflight, refusing_hosts

from preflight.model import Finding, Report, Status
from preflight.redact import MASK, is_secret_name, redact_data, redact_text, secret_values

SECRET_NAMES = [
    "WANDB_API_KEY",  # PieterGort/MedPrototypeNetworks: ProtoPNet/scripts/run_containervitpnet.sh
    "HF_TOKEN",  # microsoft/VITRA: scripts/run_robot_finetune.sh
    "OPENAI_API_KEY", "--wandb-key",  # JiH00nKw0n/Financial_ANN: scripts/train.sh
    "MLFLOW_TRACKING_PASSWORD", "AWS_ACCESS_KEY_ID", "AWS_SECRET_ACCESS_KEY",  # Resource-Aware-Data-systems-RAD/radt:
    # backend/environment.sh
    "POSTGRES_PASSWORD", "RABBITMQ_PASSWORD",  # thedivanov/pizza-store: kitchen/export.sh
    "RABBITMQ_DEFAULT_PASS",  # mineadmin/MineAdmin: .travis/setup.services.sh
    "REDIS_PASSWORD", "BOOT_ADMIN_SECURITY_JWT_BASE64-SECRET",  # Li-Yanfeng/boot-admin: shell/.bash_profile
    "DB_PW",  # Rayd-kim/inception: src/requirements/mariadb/set.sh
    "DB_PWD", "POSTGRES_PWD", "PGPASSWORD",  # markddrake/YADAMU---Yet-Another-DAta-Migration-Utility:
    # src/install/postgres/env/dbConnection.sh
    "MYSQL_PWD",  # inquisitivefrog/kubernetes: four-tier-app/scripts/inspect_db.sh
    "SLURM_JWT",  # ClusterCockpit/cc-docker: misc/curl_slurmrestd.sh (scontrol token's variable)
    "MY_DB_PASS", "--db-pass", "--password", "--secret", "--hf-token",  # issue 35 and its flag forms
    # the tools' own documentation: huggingface_hub, GitHub Actions, AWS CLI, Neptune, Comet, Google auth, sshpass(1)
    "HUGGING_FACE_HUB_TOKEN", "GITHUB_TOKEN", "AWS_SESSION_TOKEN", "NEPTUNE_API_TOKEN", "COMET_API_KEY",
    "GOOGLE_APPLICATION_CREDENTIALS", "AZURE_STORAGE_ACCOUNT_KEY", "AZURE_CLIENT_SECRET", "SSHPASS",
    "dbPass", "hfToken",  # camelCase options
]

KEPT_NAMES = [
    "RANK", "LOCAL_RANK", "WORLD_SIZE", "MASTER_ADDR",  # alexk101/sc24-dl-tutorial: export_DDP_vars.sh
    "MASTER_PORT", "HF_HOME", "CUDA_LAUNCH_BLOCKING", "TORCH_USE_CUDA_DSA",  # sudy-super/coencoder_utils: train.sh
    "NCCL_DEBUG", "NCCL_DEBUG_SUBSYS", "TORCH_DISTRIBUTED_DEBUG", "NCCL_SOCKET_IFNAME",  # XiongDaowen/
    # Integrated-Design-Diffusion-Model: start.sh
    "NCCL_P2P_DISABLE", "NCCL_IB_DISABLE", "OMP_NUM_THREADS", "CUDA_VISIBLE_DEVICES",  # JeMing-creater/
    # newTrainingEnv: gcm.sh
    "WANDB_DIR", "WANDB_CONFIG_DIR", "WANDB_CACHE_DIR", "WANDB_START_METHOD",  # PieterGort/MedPrototypeNetworks
    "WANDB_PROJECT", "HF_DATASETS_CACHE", "DATA_DIR", "MLFLOW_TRACKING_URI",  # pkage/sngp-segmentation,
    # JiH00nKw0n/Financial_ANN, Resource-Aware-Data-systems-RAD/radt (above)
    "TOKENIZERS_PARALLELISM",  # huggingface tokenizers' documentation; in most HF launch scripts
    "NCCL_IB_HCA", "GLOO_SOCKET_IFNAME", "HCCL_IF_IP", "HCCL_IF_BASE_PORT", "HCCL_SOCKET_IFNAME",
    "HCCL_CONNECT_TIMEOUT", "ASCEND_RT_VISIBLE_DEVICES", "ASCEND_HOME_PATH", "RANK_TABLE_FILE", "NODE_RANK",
    "PWD", "OLDPWD", "PATH", "LD_LIBRARY_PATH", "PYTHONPATH", "HOME", "USER", "SLURM_SUBMIT_DIR",
    "--tokenizer", "--tokenizer-name-or-path", "--max-new-tokens", "--nproc-per-node", "--master-addr",
]


def test_names_real_launch_scripts_use_for_secrets_are_masked() -> None:
    assert [n for n in SECRET_NAMES if not is_secret_name(n)] == []
    for name in SECRET_NAMES:
        text = f"{name} v4lue42" if name.startswith("-") else f"export {name}=v4lue42"
        assert "v4lue42" not in redact_text(text, ()), text


def test_training_variables_are_kept() -> None:
    assert [n for n in KEPT_NAMES if is_secret_name(n)] == []
    line = " ".join(f"{n} 4242" if n.startswith("-") else f"{n}=4242" for n in KEPT_NAMES)
    assert MASK not in redact_text(line, ())
    assert MASK not in json.dumps(redact_data({n: "4242" for n in KEPT_NAMES}, ()))


# --- credentials in URLs -----------------------------------------------------------------------------------------

URL_CASES = [  # (text, what must go, what must stay)
    ("--backend-store-uri postgresql://mlflow:dbPassw0rd9@db.internal:5432/runs",  # mxmptrv/mle-mlflow:
     "dbPassw0rd9", "postgresql://***@db.internal:5432/runs"),  # run_mlflow_tracking.sh
    ("extra-index-url = https://__token__:glpat-xyz123@git.example.com/api/v4/simple",  # a pip.conf (GitLab)
     "glpat-xyz123", "https://***@git.example.com/api/v4/simple"),
    ("git clone https://ghp_tok3nAsUser@github.com/org/repo", "ghp_tok3nAsUser", "https://***@github.com/org/"),
    ("redis://:r3disPass@cache:6379/0", "r3disPass", "redis://***@cache:6379/0"),
    ("s3://u:p@ss@word9@bucket/key", "word9", "s3://***@bucket/key"),  # an unquoted @ in the password
]


def test_url_userinfo_is_masked_and_the_host_kept() -> None:
    for text, secret, kept in URL_CASES:
        out = redact_text(text, ())
        assert secret not in out and kept in out, out
    kept = "ssh://alice@node1 tcp://10.0.0.1:29500 https://node1:8080/x?a=b@c env://"
    assert redact_text(kept, ()) == kept
    assert redact_data({"argv": ["train.py", "--data", "https://bob:s3cretPw@data.example.com/shard"]}, ()) == \
        {"argv": ["train.py", "--data", "https://***@data.example.com/shard"]}


def test_a_url_password_in_the_environment_is_masked_wherever_it_shows() -> None:
    env = {"DATABASE_URL": "postgres://u:dbPassw0rd9@db/x", "MY_DB_PASS": "plainPass77", "RANK": "0"}
    assert sorted(secret_values([env]).values()) == ["dbPassw0rd9", "plainPass77"]
    report = Report([], [Finding("net.env", "n1", Status.WARN, "probe said dbPassw0rd9 and plainPass77")], [], "",
                    0.0, extra={"env": dict(env), "launch": ["env", f"DATABASE_URL={env['DATABASE_URL']}", "t.py"]},
                    secrets=frozenset(secret_values([env]).values()))
    clean = json.dumps(report.redacted().to_dict())
    assert "dbPassw0rd9" not in clean and "plainPass77" not in clean
    assert "postgres://***@db/x" in clean and '"RANK": "0"' in clean


# --- the commands ------------------------------------------------------------------------------------------------


def test_explain_masks_url_credentials_in_both_outputs(tmp_path: Path) -> None:
    log = tmp_path / "rank0.log"
    log.write_text("MY_DB_PASS=plainPass77 socketPollConnect: connect to 10.0.0.1<29500> returned Connection "
                   "refused, exceeded error retry count after 35 attempts pg://u:dbPassw0rd9@db.internal:5432/x "
                   "reading https://alice:urlSecret55@data.example.com/shard\n")  # the 160-column cut: in dbPassw0rd9
    terminal, as_json = preflight("explain", log), preflight("explain", log, "--json")
    assert "nccl.connect_refused" in terminal.stdout and "MY_DB_PASS=***" in terminal.stdout
    assert "pg://***@db.internal" in terminal.stdout, "masked before the line is cut"
    line = json.loads(as_json.stdout)["matches"][0]["line"]
    assert "pg://***@db.internal" in line and "https://***@data.example.com/shard" in line
    for text in (terminal.stdout, as_json.stdout):
        for secret in ("dbPassw0rd", "plainPass77", "urlSecret55"):
            assert secret not in text


def test_diagnose_masks_url_credentials_in_report_json_and_the_terminal(tmp_path: Path) -> None:
    hosts = refusing_hosts(tmp_path, "127.0.0.1", "127.0.0.2")  # unreachable: the launch is judged all the same
    launch = ["env", "DATABASE_URL=postgres://mlflow:dbPassw0rd9@db.internal:5432/runs", "MY_DB_PASS=plainPass77",
              "torchrun", "--nnodes=3", "--nproc-per-node=1", "train.py", "--data",
              "https://alice:urlSecret55@data.example.com/shard"]  # nnodes=3 on 2 hosts: a corrected launch
    as_json = preflight("diagnose", "--hosts", hosts, "--json", "--timeout", "3", "--report-dir", tmp_path / "j",
                        "--", *launch)
    terminal = preflight("diagnose", "--hosts", hosts, "--timeout", "3", "--report-dir", tmp_path / "t", "--",
                         *launch)
    summary = json.loads((tmp_path / "j" / "report.json").read_text())["diagnose"]
    assert summary["launch"]["argv"][1:3] == ["DATABASE_URL=postgres://***@db.internal:5432/runs", "MY_DB_PASS=***"]
    assert summary["launch"]["argv"][-1] == "https://***@data.example.com/shard"
    assert "https://***@data.example.com/shard" in summary["corrected_launch"]
    assert "corrected launch:" in terminal.stdout
    texts = [as_json.stdout, terminal.stdout, *(p.read_text() for p in tmp_path.glob("*/report.json"))]
    for text in texts:
        for secret in ("dbPassw0rd9", "plainPass77", "urlSecret55"):
            assert secret not in text
