"""A diffusion pipeline's checkpoint given to SGLang's LLM server (reasoning/diffusion_checkpoint.py,
sgl-project/sglang#19104): start-up fails while the server's arguments are built, and the entry point that serves it
is `sglang serve` (sglang/cli/serve.py, releases read from facts/engine_modules.json.gz).  Logs written for these
tests: a launch command and the LLM server's start-up frames, cut before the exception line as such pastes are."""

from __future__ import annotations

from logsleuth.api import DiagnoseOptions
from tests.reasoning.diagnosed import first_diagnosis

RULE = "rule-diffusion-checkpoint-to-llm-server"


def _launch(model: str, last_frame: str = "sglang/srt/server_args.py\", line 610, in __post_init__\n    self._handle_gpu_memory_settings()") -> str:
    return (f"$ python3 -m sglang.launch_server --model-path {model} --port 30000\n"
            "Traceback (most recent call last):\n"
            '  File "/opt/venv/lib/python3.12/site-packages/sglang/launch_server.py", line 14, in <module>\n'
            "    server_args = prepare_server_args(sys.argv[1:])\n"
            '  File "/opt/venv/lib/python3.12/site-packages/sglang/srt/server_args.py", line 4120, in prepare_server_args\n'
            "    return ServerArgs.from_cli_args(raw_args)\n"
            f'  File "/opt/venv/lib/python3.12/site-packages/{last_frame}\n')


def test_a_video_diffusion_pipeline_to_the_llm_launcher_names_the_diffusion_entry_point() -> None:
    diagnosis = first_diagnosis(_launch("Wan-AI/Wan2.2-T2V-A14B-Diffusers"))
    assert (diagnosis.pattern, diagnosis.category, diagnosis.engine) == (RULE, "model-path", "sglang"), diagnosis
    assert diagnosis.fix is not None and "sglang serve" in diagnosis.fix.summary, diagnosis.fix
    assert "0.5.5" in diagnosis.fix.summary, "the releases that have the entry point, from the module index"


def test_an_image_pipelines_local_path_is_read_by_its_last_part() -> None:
    assert first_diagnosis(_launch("/data/hub/Qwen-Image-Edit/")).pattern == RULE


def test_a_language_model_failing_at_the_same_place_is_not_told_so() -> None:
    assert first_diagnosis(_launch("Qwen/Qwen2.5-7B-Instruct")).pattern != RULE


def test_a_failure_inside_the_diffusion_runtime_is_not_a_wrong_entry_point() -> None:
    log = _launch("black-forest-labs/FLUX.1-dev",
                  "sglang/multimodal_gen/runtime/pipelines/flux.py\", line 88, in load\n    self._load_vae()")
    assert first_diagnosis(log).pattern != RULE


def test_a_release_before_the_diffusion_runtime_is_told_to_upgrade_not_to_run_an_entry_point_it_lacks() -> None:
    options = DiagnoseOptions(include_user_patterns=False, engine_version="0.4.6.post2")
    diagnosis = first_diagnosis(_launch("black-forest-labs/FLUX.1-schnell"), options)
    assert diagnosis.pattern == RULE and diagnosis.fix is not None
    assert "0.4.6.post2 has no diffusion entry point" in diagnosis.fix.summary, diagnosis.fix


def test_a_launch_through_sglang_serve_is_not_told_to_run_sglang_serve() -> None:
    """`sglang serve` hands a model its detection did not find to be a pipeline to the LLM server (sglang/cli/serve.py
    -> prepare_server_args): the user's own command must not come back as the cure, nor launch_server be blamed."""
    log = ("$ sglang serve --model-path black-forest-labs/FLUX.1-dev --port 30000\n"
           "[2026-03-14 09:20:01] sglang version 0.5.9\n"
           "Traceback (most recent call last):\n"
           '  File "/opt/venv/bin/sglang", line 8, in <module>\n    sys.exit(main())\n'
           '  File "/opt/venv/lib/python3.12/site-packages/sglang/cli/main.py", line 40, in main\n    serve(args, extra_argv)\n'
           '  File "/opt/venv/lib/python3.12/site-packages/sglang/cli/serve.py", line 70, in serve\n'
           "    server_args = prepare_server_args(extra_argv)\n"
           '  File "/opt/venv/lib/python3.12/site-packages/sglang/srt/server_args.py", line 4120, in prepare_server_args\n'
           "    return ServerArgs.from_cli_args(raw_args)\n"
           '  File "/opt/venv/lib/python3.12/site-packages/sglang/srt/server_args.py", line 610, in __post_init__\n'
           "    self._handle_gpu_memory_settings()\n")
    assert first_diagnosis(log).pattern != RULE
    assert first_diagnosis(_launch("black-forest-labs/FLUX.1-dev").replace(
        "python3 -m sglang.launch_server", "sglang serve")).pattern != RULE


def test_stable_diffusion_xl_has_no_pipeline_config_of_its_own_and_is_not_read() -> None:
    assert first_diagnosis(_launch("stabilityai/stable-diffusion-xl-base-1.0")).pattern != RULE


def test_a_family_is_given_the_releases_of_its_own_pipeline_config() -> None:
    """stablediffusion3.py is in 0.5.11 and later: 0.5.9 has sglang serve but no config for SD3."""
    options = DiagnoseOptions(include_user_patterns=False, engine_version="0.5.9")
    diagnosis = first_diagnosis(_launch("stabilityai/stable-diffusion-3.5-medium"), options)
    assert diagnosis.pattern == RULE and diagnosis.fix is not None
    assert "0.5.9 has no diffusion entry point for this model family" in diagnosis.fix.summary, diagnosis.fix
    assert "0.5.11" in diagnosis.fix.summary and "0.5.5" not in diagnosis.fix.summary, diagnosis.fix


def test_flux_in_0_5_5_reads_that_release_s_older_config_package() -> None:
    options = DiagnoseOptions(include_user_patterns=False, engine_version="0.5.5")
    diagnosis = first_diagnosis(_launch("black-forest-labs/FLUX.1-dev"), options)
    assert diagnosis.fix is not None and "no diffusion entry point" not in diagnosis.fix.summary, diagnosis.fix


def test_the_diffusion_extra_is_named_for_a_release_whose_metadata_declares_it() -> None:
    options = DiagnoseOptions(include_user_patterns=False, engine_version="0.5.9")
    diagnosis = first_diagnosis(_launch("black-forest-labs/FLUX.1-dev"), options)
    assert diagnosis.fix is not None and any('"sglang[diffusion]' in step for step in diagnosis.fix.steps), diagnosis.fix
