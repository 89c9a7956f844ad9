"""A tiny language model trained on tokens.jsonl, with the embedding table
sized by tiny-model/config.json (500 rows). The chat rows of tokens.jsonl hold
ids 500 and 501 (tokens added to the tokenizer without resizing the model):
on a GPU the embedding fails with "CUDA error: device-side assert triggered"
a few steps in, on CPU with "IndexError: index out of range in self", and
under `devassert run` the guard stops it at the line below that calls the
embedding, naming the values and the sample.

usage: devassert run -- python examples/train.py
"""

import json
from pathlib import Path

import torch
from torch import nn
from torch.utils.data import DataLoader, Dataset

HERE = Path(__file__).parent
DEVICE = "cuda" if torch.cuda.is_available() else "cpu"


class TokensDataset(Dataset):
    def __init__(self, path):
        self.rows = [json.loads(line)["input_ids"] for line in path.open()]

    def __len__(self):
        return len(self.rows)

    def __getitem__(self, i):
        return torch.tensor(self.rows[i])


def pad(batch):
    return nn.utils.rnn.pad_sequence(batch, batch_first=True, padding_value=0)


class TinyLM(nn.Module):
    def __init__(self, vocab_size, dim=16):
        super().__init__()
        self.embed = nn.Embedding(vocab_size, dim)
        self.head = nn.Linear(dim, vocab_size)

    def forward(self, ids):
        return self.head(self.embed(ids))


def main():
    config = json.loads((HERE / "tiny-model" / "config.json").read_text())
    model = TinyLM(config["vocab_size"]).to(DEVICE)
    opt = torch.optim.AdamW(model.parameters(), lr=1e-3)
    loader = DataLoader(TokensDataset(HERE / "tokens.jsonl"), batch_size=2, collate_fn=pad)
    for step, ids in enumerate(loader):
        ids = ids.to(DEVICE)
        logits = model(ids[:, :-1])
        loss = nn.functional.cross_entropy(logits.reshape(-1, logits.size(-1)), ids[:, 1:].reshape(-1))
        opt.zero_grad()
        loss.backward()
        opt.step()
        print(f"step {step}: loss {loss.item():.3f}")


if __name__ == "__main__":
    main()
