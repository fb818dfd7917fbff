#!/usr/bin/env python3
"""The validation zoo: 60+ architectures from torchvision, timm and transformers, exported with random
weights at opset 17 (TorchScript exporter, a symbolic batch dim) and saved weight-free, so the files
can live in the repository (tests/models/zoo/) and be measured again on any GPU.

Each entry names its family; the families marked held_out are kept out of anything tuned on this
zoo (docs/validation.md reports them apart). Runs on the GPU machine, whose python3 has torch,
torchvision, timm and transformers. Usage: python3 scripts/gpu/zoo.py OUT_DIR [--jobs N] [--only NAME,...]"""
import argparse, os, sys, time, traceback
from concurrent.futures import ProcessPoolExecutor

# (name, source, constructor, family, held_out)
ZOO = [
    # classic and bottleneck CNNs
    ("resnet18", "tv", "resnet18", "classic_cnn", False),
    ("resnet50", "tv", "resnet50", "classic_cnn", False),
    ("resnet101", "tv", "resnet101", "classic_cnn", False),
    ("wide_resnet50_2", "tv", "wide_resnet50_2", "classic_cnn", False),
    ("vgg16_bn", "tv", "vgg16_bn", "classic_cnn", False),
    ("densenet121", "tv", "densenet121", "classic_cnn", False),
    ("inception_v3", "tv", "inception_v3", "classic_cnn", False),
    ("googlenet", "tv", "googlenet", "classic_cnn", False),
    ("dla34", "timm", "dla34", "classic_cnn", False),
    ("resnet50d", "timm", "resnet50d", "classic_cnn", False),
    # grouped convolutions
    ("resnext50_32x4d", "tv", "resnext50_32x4d", "grouped_cnn", True),
    ("resnext101_32x8d", "tv", "resnext101_32x8d", "grouped_cnn", True),
    ("regnet_y_400mf", "tv", "regnet_y_400mf", "grouped_cnn", True),
    ("regnet_y_1_6gf", "tv", "regnet_y_1_6gf", "grouped_cnn", True),
    ("regnetx_016", "timm", "regnetx_016", "grouped_cnn", True),
    ("seresnext26d_32x4d", "timm", "seresnext26d_32x4d", "grouped_cnn", True),
    # depthwise and mobile CNNs
    ("mobilenet_v2", "tv", "mobilenet_v2", "depthwise_cnn", False),
    ("mobilenet_v3_large", "tv", "mobilenet_v3_large", "depthwise_cnn", False),
    ("mnasnet1_0", "tv", "mnasnet1_0", "depthwise_cnn", False),
    ("efficientnet_b0", "tv", "efficientnet_b0", "depthwise_cnn", False),
    ("efficientnet_b3", "tv", "efficientnet_b3", "depthwise_cnn", False),
    ("shufflenet_v2_x1_0", "tv", "shufflenet_v2_x1_0", "depthwise_cnn", False),
    ("ghostnet_100", "timm", "ghostnet_100", "depthwise_cnn", False),
    ("lcnet_100", "timm", "lcnet_100", "depthwise_cnn", False),
    ("efficientnetv2_s", "tv", "efficientnet_v2_s", "depthwise_cnn", False),
    ("mixnet_s", "timm", "mixnet_s", "depthwise_cnn", False),
    # re-parameterised, multi-branch and large-kernel CNNs
    ("repvgg_a2", "timm", "repvgg_a2", "reparam_cnn", False),
    ("mobileone_s1", "timm", "mobileone_s1", "reparam_cnn", False),
    ("convnext_tiny", "tv", "convnext_tiny", "reparam_cnn", False),
    ("convnextv2_nano", "timm", "convnextv2_nano", "reparam_cnn", False),
    ("hrnet_w18_small", "timm", "hrnet_w18_small", "reparam_cnn", False),
    ("inception_next_tiny", "timm", "inception_next_tiny", "reparam_cnn", False),
    # hybrids of convolutions and attention
    ("mobilevit_s", "timm", "mobilevit_s", "hybrid", True),
    ("levit_128", "timm", "levit_128", "hybrid", True),
    ("efficientformer_l1", "timm", "efficientformer_l1", "hybrid", True),
    ("edgenext_small", "timm", "edgenext_small", "hybrid", True),
    ("coat_lite_tiny", "timm", "coat_lite_tiny", "hybrid", True),
    ("fastvit_t8", "timm", "fastvit_t8", "hybrid", True),
    # vision transformers and their attention variants
    ("vit_tiny_patch16_224", "timm", "vit_tiny_patch16_224", "vit", False),
    ("vit_small_patch16_224", "timm", "vit_small_patch16_224", "vit", False),
    ("vit_base_patch16_224", "timm", "vit_base_patch16_224", "vit", False),
    ("deit_small_patch16_224", "timm", "deit_small_patch16_224", "vit", False),
    ("swin_tiny_patch4_window7_224", "timm", "swin_tiny_patch4_window7_224", "vit", False),
    ("beit_base_patch16_224", "timm", "beit_base_patch16_224", "vit", False),
    ("cait_xxs24_224", "timm", "cait_xxs24_224", "vit", False),
    ("pvt_v2_b0", "timm", "pvt_v2_b0", "vit", False),
    ("twins_svt_small", "timm", "twins_svt_small", "vit", False),
    ("xcit_tiny_12_p16_224", "timm", "xcit_tiny_12_p16_224", "vit", False),
    ("eva02_tiny_patch14_224", "timm", "eva02_tiny_patch14_224.mim_in22k", "vit", False),
    # MLP and pooling mixers
    ("mixer_b16_224", "timm", "mixer_b16_224", "mixer", True),
    ("resmlp_12_224", "timm", "resmlp_12_224", "mixer", True),
    ("gmlp_s16_224", "timm", "gmlp_s16_224", "mixer", True),
    ("poolformer_s12", "timm", "poolformer_s12", "mixer", True),
    ("convmixer_768_32", "timm", "convmixer_768_32", "mixer", True),
    # text encoders (transformers, built from their configs)
    ("bert_base", "hf", "BertConfig", "text_encoder", False),
    ("distilbert", "hf", "DistilBertConfig", "text_encoder", False),
    ("roberta_base", "hf", "RobertaConfig", "text_encoder", False),
    ("albert_base", "hf", "AlbertConfig", "text_encoder", False),
    ("electra_small", "hf", "ElectraConfig", "text_encoder", False),
    ("mpnet_base", "hf", "MPNetConfig", "text_encoder", False),
    # detection and segmentation heads
    ("fcn_resnet50", "tvseg", "fcn_resnet50", "dense_head", True),
    ("deeplabv3_mobilenet_v3_large", "tvseg", "deeplabv3_mobilenet_v3_large", "dense_head", True),
    ("lraspp_mobilenet_v3_large", "tvseg", "lraspp_mobilenet_v3_large", "dense_head", True),
    ("deeplabv3_resnet50", "tvseg", "deeplabv3_resnet50", "dense_head", True),
]

SEQ = 128


def build(source, ctor):
    import torch
    if source == "tv":
        import torchvision
        kwargs = {"aux_logits": False, "init_weights": False} if ctor in ("inception_v3", "googlenet") else {}
        return torchvision.models.get_model(ctor, weights=None, **kwargs), torch.randn(1, 3, 299 if ctor == "inception_v3" else 224, 299 if ctor == "inception_v3" else 224)
    if source == "tvseg":
        import torchvision
        return torchvision.models.get_model(ctor, weights=None, weights_backbone=None, aux_loss=False), torch.randn(1, 3, 512, 512)
    if source == "timm":
        import timm
        m = timm.create_model(ctor, pretrained=False)
        size = m.default_cfg.get("input_size", (3, 224, 224))
        return m, torch.randn(1, *size)
    import transformers
    config = getattr(transformers, ctor)()
    model = transformers.AutoModel.from_config(config)
    return model, torch.randint(0, 1000, (1, SEQ))


def export(entry, out_dir):
    name, source, ctor, family, held_out = entry
    import torch, onnx
    sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
    t0 = time.time()
    try:
        torch.manual_seed(0)
        model, x = build(source, ctor)
        model.eval()
        path = os.path.join(out_dir, name + ".onnx")
        text = source == "hf"
        names = ["input_ids"] if text else ["input"]
        axes = {names[0]: {0: "batch", 1: "seq"} if text else {0: "batch"}}
        wrapped = model
        if source == "tvseg":
            wrapped = SegOut(model)
        elif text:
            wrapped = HiddenOut(model)
        with torch.no_grad():
            torch.onnx.export(wrapped, (x,), path, opset_version=17, input_names=names, output_names=["output"],
                              dynamic_axes=axes, dynamo=False)
        m = onnx.load(path)
        for t in m.graph.initializer:  # weight-free, as the shared reference models are
            if t.HasField("raw_data") and len(t.raw_data) > 4096:
                onnx.external_data_helper.set_external_data(t, location=name + ".weights")
                t.ClearField("raw_data")
                t.data_location = onnx.TensorProto.EXTERNAL
        with open(path, "wb") as f:
            f.write(m.SerializeToString())
        return f"OK {name} {family} {'held_out' if held_out else 'tuned'} {len(m.graph.node)} nodes {os.path.getsize(path)/1e3:.0f} KB {time.time()-t0:.0f} s"
    except Exception as e:  # noqa: BLE001 - one failed export must not stop the zoo
        return f"FAIL {name}: {type(e).__name__}: {str(e)[:200]}"


import torch  # noqa: E402


class SegOut(torch.nn.Module):
    def __init__(self, m):
        super().__init__()
        self.m = m

    def forward(self, x):
        return self.m(x)["out"]


class HiddenOut(torch.nn.Module):
    def __init__(self, m):
        super().__init__()
        self.m = m

    def forward(self, ids):
        return self.m(input_ids=ids).last_hidden_state


def main():
    p = argparse.ArgumentParser()
    p.add_argument("out")
    p.add_argument("--jobs", type=int, default=8)
    p.add_argument("--only", default="")
    a = p.parse_args()
    os.makedirs(a.out, exist_ok=True)
    entries = [e for e in ZOO if not a.only or e[0] in a.only.split(",")]
    with ProcessPoolExecutor(a.jobs) as pool:
        for line in pool.map(export, entries, [a.out] * len(entries)):
            print(line, flush=True)


if __name__ == "__main__":
    main()
