"""torch.utils.data, torch.accelerator and torch.set_printoptions (issue 22): datasets and
DataLoaders as the tutorials use them (shuffled in PyTorch's order, from the same draws), the
accelerator question a CPU answers, and tensors printed under changed print options."""

from __future__ import annotations

from tools.goldens import collect

SNIPPETS: list[dict] = []
S = collect(SNIPPETS)

# ***** 1. datasets *****

S(
    "datautils-tensordataset-basics",
    """
import re
import torch
from torch.utils.data import TensorDataset
X = torch.arange(12.).reshape(6, 2)
y = torch.tensor([0, 1, 0, 1, 1, 0])
ds = TensorDataset(X, y)
print(len(ds), ds[0], ds[-1], type(ds[2]).__name__)
print(ds[1:3])
print(ds[[0, 5]])
print(len(ds.tensors), ds.tensors[0] is X, ds.tensors[1] is y)
print(type(ds))
print(re.sub("0x[0-9a-f]+", "ADDRESS", repr(ds)))
first, label = ds[4]
only = TensorDataset(torch.ones(3))
print(only[0], len(only))
""",
)
S(
    "datautils-tensordataset-of-graph-tensors",
    """
import torch
from torch.utils.data import TensorDataset, DataLoader
w = torch.tensor([[1.0, 2.0], [3.0, 4.0], [5.0, 6.0]], requires_grad=True)
h = w * 2
ds = TensorDataset(h, torch.arange(3))
x0, y0 = ds[0]
print(x0, y0)
batch, labels = next(iter(DataLoader(ds, batch_size=2)))
print(batch, labels)
batch.sum().backward()
print(w.grad)
""",
)
S(
    "datautils-custom-dataset-class",
    """
import torch
from torch.utils.data import Dataset, DataLoader

class Squares(Dataset):
    def __init__(self, n):
        self.x = torch.arange(n, dtype=torch.float32)

    def __len__(self):
        return len(self.x)

    def __getitem__(self, idx):
        return self.x[idx], self.x[idx] ** 2

ds = Squares(7)
print(len(ds), ds[3])
for xb, yb in DataLoader(ds, batch_size=3):
    print(xb, yb)
print(isinstance(ds, Dataset), issubclass(Squares, torch.utils.data.Dataset))
""",
)
S(
    "datautils-dataset-generic-and-plain-list",
    """
import torch
from torch.utils.data import Dataset, DataLoader

class Pairs(Dataset[tuple]):
    def __init__(self, pairs):
        self.pairs = pairs
    def __len__(self):
        return len(self.pairs)
    def __getitem__(self, i):
        return self.pairs[i]

loader = DataLoader(Pairs([(1, 2.5), (3, 4.5), (5, 6.5)]), batch_size=2)
for a, b in loader:
    print(a, b)
# a plain list of tensors is a dataset too
for batch in DataLoader([torch.tensor([1.0, 2.0]), torch.tensor([3.0, 4.0])], batch_size=2):
    print(batch)
print(list(DataLoader(range(5), batch_size=2)))
""",
)
S(
    "datautils-subset-and-concat",
    """
import torch
from torch.utils.data import TensorDataset, Subset, ConcatDataset, DataLoader
ds = TensorDataset(torch.arange(10) * 10)
sub = Subset(ds, [9, 0, 4])
print(len(sub), sub[0], sub[2], sub.indices, sub.dataset is ds)
print(sub[[0, 1]])
both = ds + sub
print(type(both).__name__, len(both), both[10], both[-1], both.cumulative_sizes)
cat = ConcatDataset([sub, sub])
print(len(cat), [cat[i][0].item() for i in range(len(cat))])
for (batch,) in DataLoader(cat, batch_size=4):
    print(batch)
try:
    both[-14]
except ValueError as e:
    print(e)
""",
)
S(
    "datautils-random-split-lengths",
    """
import torch
from torch.utils.data import TensorDataset, random_split
ds = TensorDataset(torch.arange(10))
train, test = random_split(ds, [7, 3], generator=torch.Generator().manual_seed(42))
print(type(train), len(train), len(test))
print(train.indices, test.indices)
print([train[i][0].item() for i in range(3)])
a, b, c = random_split(range(10), [3, 3, 4])
print(a.indices, b.indices, c.indices, list(a))
print(torch.rand(2))
""",
)
S(
    "datautils-random-split-fractions",
    """
import torch
from torch.utils.data import random_split
g = torch.Generator().manual_seed(0)
parts = random_split(range(30), [0.3, 0.3, 0.4], generator=g)
print([len(p) for p in parts], parts[0].indices)
parts = random_split(range(11), [0.5, 0.5], generator=g)
print([len(p) for p in parts], [p.indices for p in parts])
parts = random_split(range(10), [0.33, 0.33, 0.34], generator=g)
print([len(p) for p in parts])
parts = random_split(range(3), [0.1, 0.9], generator=g)
print([len(p) for p in parts])
parts = random_split(range(2), [0.25, 0.25, 0.25, 0.25], generator=g)
print([len(p) for p in parts], [p.indices for p in parts])
""",
)
S(
    "datautils-random-split-errors",
    """
import torch
from torch.utils.data import random_split
for lengths in ([3, 3], [5, 6], [0.5, 0.6], [0.3, 0.3], [1.2, -0.2], [-1, 11]):
    try:
        print(lengths, [p.indices for p in random_split(range(10), lengths)])
    except ValueError as e:
        print(lengths, "ValueError:", e)
""",
)
S(
    "datautils-dataset-errors",
    """
import torch
from torch.utils.data import TensorDataset, Dataset, DataLoader, Subset
try:
    TensorDataset(torch.ones(3, 2), torch.ones(4))
except AssertionError as e:
    print("AssertionError:", e)
try:
    Dataset()[0]
except NotImplementedError as e:
    print("NotImplementedError:", e)
ds = TensorDataset(torch.ones(3))
try:
    ds[3]
except IndexError as e:
    print("IndexError:", e)

class OnlyGetitem(Subset):
    def __getitem__(self, i):
        return i
try:
    OnlyGetitem(ds, [0])
except NotImplementedError as e:
    print("NotImplementedError:", e)

class NoLength(Dataset):
    def __getitem__(self, i):
        return i
try:
    DataLoader(NoLength(), shuffle=True)
except TypeError as e:
    print("TypeError:", e)
loader = DataLoader(NoLength())
try:
    len(loader)
except TypeError as e:
    print("TypeError:", e)
try:
    DataLoader(TensorDataset(torch.ones(0)), shuffle=True)
except ValueError as e:
    print("ValueError:", e)
print(list(DataLoader(TensorDataset(torch.ones(0)))))
""",
)

# ***** 2. DataLoader: batches and their order *****

S(
    "datautils-loader-shuffle-with-generator",
    """
import torch
from torch.utils.data import DataLoader, TensorDataset
X = torch.arange(20.).reshape(10, 2)
y = torch.arange(10)
loader = DataLoader(TensorDataset(X, y), batch_size=4, shuffle=True,
                    generator=torch.Generator().manual_seed(42))
print(len(loader))
for epoch in range(3):
    for xb, yb in loader:
        print(epoch, yb.tolist(), xb.shape)
print(torch.rand(2))
xb, yb = next(iter(loader))
print(xb, yb)
""",
)
S(
    "datautils-loader-shuffle-default-generator",
    """
import torch
from torch.utils.data import DataLoader, TensorDataset
torch.manual_seed(3)
ds = TensorDataset(torch.arange(10))
loader = DataLoader(ds, batch_size=3, shuffle=True)
for (batch,) in loader:
    print(batch)
print(torch.rand(2))
for (batch,) in loader:
    print(batch)
print(torch.rand(2))
""",
)
S(
    "datautils-loader-unshuffled-still-draws",
    """
import torch
from torch.utils.data import DataLoader, TensorDataset
torch.manual_seed(0)
loader = DataLoader(TensorDataset(torch.arange(5)), batch_size=2)
print([b[0].tolist() for b in loader])
print(torch.rand(1))
torch.manual_seed(0)
print(torch.rand(1))
it = iter(loader)
print(torch.rand(1))
print(len(it), next(it))
""",
)
S(
    "datautils-loader-drop-last-and-lengths",
    """
import torch
from torch.utils.data import DataLoader, TensorDataset
ds = TensorDataset(torch.arange(10))
for bs in (1, 3, 4, 5, 10, 11):
    for drop in (False, True):
        loader = DataLoader(ds, batch_size=bs, drop_last=drop)
        print(bs, drop, len(loader), [len(b[0]) for b in loader])
g = torch.Generator().manual_seed(1)
loader = DataLoader(ds, batch_size=3, shuffle=True, drop_last=True, generator=g)
print([b[0].tolist() for b in loader])
print([b[0].tolist() for b in loader])
print(torch.randint(0, 100, (3,), generator=g))
""",
)
S(
    "datautils-loader-left-early",
    """
import torch
from torch.utils.data import DataLoader, TensorDataset
g = torch.Generator().manual_seed(7)
loader = DataLoader(TensorDataset(torch.arange(8)), batch_size=2, shuffle=True, generator=g)
for i, (batch,) in enumerate(loader):
    print(batch)
    if i == 1:
        break
print(torch.randint(0, 1000, (2,), generator=g))
for i, (batch,) in enumerate(loader):
    if i == 3:
        print("last", batch)
print(torch.randint(0, 1000, (2,), generator=g))
""",
)
S(
    "datautils-loader-attributes",
    """
import re
import torch
import torch.utils.data as data
ds = data.TensorDataset(torch.arange(6.))
loader = data.DataLoader(ds, batch_size=4)
print(type(loader))
print(re.sub("0x[0-9a-f]+", "ADDRESS", repr(loader)))
print(type(iter(loader)), type(loader.sampler), type(loader.batch_sampler))
print(loader.batch_size, loader.drop_last, loader.num_workers, loader.dataset is ds)
print(loader.generator, loader.pin_memory, loader.timeout)
print(loader.collate_fn is data.default_collate)
shuffled = data.DataLoader(ds, shuffle=True)
print(type(shuffled.sampler).__name__, shuffled.batch_size, len(shuffled))
try:
    loader.batch_size = 2
except ValueError as e:
    print(e)
loader.num_workers = 0
print(torch.utils.data.DataLoader is data.DataLoader, data.get_worker_info())
""",
)
S(
    "datautils-loader-argument-errors",
    """
import torch
from torch.utils.data import DataLoader, TensorDataset, SequentialSampler, BatchSampler
ds = TensorDataset(torch.arange(6))
attempts = [
    dict(batch_size=0), dict(batch_size=-1), dict(batch_size=2.5), dict(batch_size=True),
    dict(batch_size="4"), dict(drop_last=1), dict(num_workers=-1), dict(timeout=-1),
    dict(prefetch_factor=2), dict(persistent_workers=True),
    dict(sampler=SequentialSampler(ds), shuffle=True),
    dict(batch_sampler=BatchSampler(SequentialSampler(ds), 2, False), batch_size=2),
    dict(batch_sampler=BatchSampler(SequentialSampler(ds), 2, False), shuffle=True),
    dict(batch_size=None, drop_last=True), dict(multiprocessing_context="fork"),
]
for kwargs in attempts:
    try:
        DataLoader(ds, **kwargs)
        print(sorted(kwargs), "accepted")
    except (ValueError, TypeError) as e:
        print(sorted(kwargs), type(e).__name__, e)
try:
    iter(DataLoader(ds, timeout=5))
except AssertionError as e:
    print("AssertionError:", e)
""",
)
S(
    "datautils-loader-batch-size-none",
    """
import torch
from torch.utils.data import DataLoader, TensorDataset
ds = TensorDataset(torch.arange(6.).reshape(3, 2), torch.tensor([1, 0, 1]))
loader = DataLoader(ds, batch_size=None)
print(len(loader), loader.batch_sampler, loader.collate_fn.__name__)
for sample in loader:
    print(type(sample).__name__, sample)
for x in DataLoader([1, 2.5, "a"], batch_size=None):
    print(x)
""",
)
S(
    "datautils-loader-samplers",
    """
import torch
from torch.utils.data import (DataLoader, TensorDataset, RandomSampler, SequentialSampler,
                              BatchSampler, SubsetRandomSampler, WeightedRandomSampler)
ds = TensorDataset(torch.arange(10))
g = torch.Generator().manual_seed(5)
print(list(SequentialSampler(ds)), len(SequentialSampler(ds)))
print(list(RandomSampler(ds, generator=g)))
print(list(RandomSampler(ds, replacement=True, num_samples=40, generator=g)))
print(list(RandomSampler(ds, num_samples=13, generator=g)), len(RandomSampler(ds, num_samples=13)))
print(list(SubsetRandomSampler([3, 5, 7], generator=g)))
print(list(WeightedRandomSampler([0.1, 0.9, 0.4, 0.7, 3.0, 0.6], 5, generator=g)))
weights = [0.9, 0.4, 0.05, 0.2, 0.3, 0.1]
print(list(WeightedRandomSampler(weights, 5, replacement=False, generator=g)))
print(list(BatchSampler(SequentialSampler(range(10)), batch_size=3, drop_last=False)))
print(list(BatchSampler(range(10), batch_size=3, drop_last=True)))
loader = DataLoader(ds, sampler=SubsetRandomSampler([0, 2, 4, 6], generator=g), batch_size=3)
print([b[0].tolist() for b in loader], len(loader))
loader = DataLoader(ds, batch_sampler=[[1, 2], [9], [0, 0, 0]])
print([b[0].tolist() for b in loader], len(loader))
for attempt in (lambda: RandomSampler(ds, replacement=1), lambda: RandomSampler(ds, num_samples=0),
                lambda: WeightedRandomSampler([1.0], 0), lambda: WeightedRandomSampler([[1.0]], 1),
                lambda: BatchSampler(range(3), 0, False)):
    try:
        attempt()
    except (TypeError, ValueError) as e:
        print(type(e).__name__, e)
""",
)
S(
    "datautils-random-sampler-default-generator",
    """
import torch
from torch.utils.data import RandomSampler
torch.manual_seed(11)
s = RandomSampler(range(6))
print(list(s), list(s))
print(list(RandomSampler(range(6), replacement=True)))
print(torch.rand(1))
it = iter(RandomSampler(range(4)))
print(torch.rand(1))
print(next(it))
""",
)
S(
    "datautils-default-collate-kinds",
    """
import collections
import numpy as np
import torch
from torch.utils.data import default_collate, default_convert, DataLoader
print(default_collate([0, 1, 2, 3]))
print(default_collate([0.5, 1.0]))
print(default_collate([True, False]))
print(default_collate(["a", "b", "c"]))
print(default_collate([{"A": 0, "B": 1}, {"A": 100, "B": 100}]))
Point = collections.namedtuple("Point", ["x", "y"])
print(default_collate([Point(0, 0), Point(1, 1)]))
print(default_collate([(0, 1), (2, 3)]))
print(default_collate([[0, 1], [2, 3]]))
print(default_collate([(1, "a"), (2, "b")]))
print(default_collate([torch.tensor([1.0, 2.0]), torch.tensor([3.0, 4.0])]))
print(default_collate([torch.tensor(1), torch.tensor(2)]))
print(default_collate([np.array([1.0, 2.0]), np.array([3.0, 4.0])]))
print(default_collate([np.float64(1.5), np.float64(2.5)]))
print(default_collate([np.int32(1), np.int32(2)]))
print(default_convert(np.array([0, 1])), default_convert(0), default_convert((np.array(1), 2)))
print(default_convert(Point(np.array(0), np.array(1))), default_convert([np.array(3)]))
for bad in ([object(), object()], [[1, 2], [3]], [torch.ones(2), torch.ones(3)], [np.array(["a"])]):
    try:
        default_collate(bad)
    except (TypeError, RuntimeError) as e:
        print(type(e).__name__, str(e).replace(hex(id(bad[0])), "ADDRESS"))
""",
)
S(
    "datautils-loader-custom-collate",
    """
import torch
from torch.utils.data import DataLoader

def pad_collate(batch):
    longest = max(len(seq) for seq in batch)
    padded = torch.zeros(len(batch), longest)
    for i, seq in enumerate(batch):
        padded[i, : len(seq)] = torch.tensor(seq, dtype=torch.float32)
    return padded, torch.tensor([len(seq) for seq in batch])

seqs = [[1, 2, 3], [4], [5, 6], [7, 8, 9, 10]]
for padded, lengths in DataLoader(seqs, batch_size=2, collate_fn=pad_collate):
    print(padded, lengths)
print(list(DataLoader(seqs, batch_size=3, collate_fn=lambda b: b)))
""",
)
S(
    "datautils-iterable-dataset",
    """
import torch
from torch.utils.data import IterableDataset, DataLoader

class Counter(IterableDataset):
    def __init__(self, start, end):
        self.start, self.end = start, end
    def __iter__(self):
        return iter(range(self.start, self.end))
    def __len__(self):
        return self.end - self.start

ds = Counter(3, 10)
print(list(DataLoader(ds)))
print(list(DataLoader(ds, batch_size=3)), len(DataLoader(ds, batch_size=3)))
dropping = DataLoader(ds, batch_size=3, drop_last=True)
print(list(dropping), len(dropping))
print(list(DataLoader(ds, batch_size=None)))
print(list(DataLoader(ds + Counter(0, 2), batch_size=4)))
try:
    DataLoader(ds, shuffle=True)
except ValueError as e:
    print(e)
""",
)
S(
    "datautils-loader-workers-in-order",
    """
import torch
from torch.utils.data import DataLoader, TensorDataset
ds = TensorDataset(torch.arange(12.).reshape(6, 2), torch.arange(6))
g = torch.Generator().manual_seed(2)
loader = DataLoader(ds, batch_size=2, shuffle=True, num_workers=2, generator=g)
for epoch in range(2):
    for xb, yb in loader:
        print(epoch, xb, yb)
print(torch.randint(0, 100, (2,), generator=g), torch.rand(1))
print(len(loader), loader.num_workers, loader.prefetch_factor)
plain = DataLoader(ds, batch_size=4, num_workers=1, pin_memory=True, prefetch_factor=3)
print([b[1].tolist() for b in plain])
""",
)
S(
    "datautils-loader-pin-memory",
    """
import torch
from torch.utils.data import DataLoader, TensorDataset
loader = DataLoader(TensorDataset(torch.arange(4.)), batch_size=2, pin_memory=True)
for (batch,) in loader:
    print(batch)
""",
)

# ***** 3. the tutorials *****

S(
    "datautils-tutorial-datasets-and-dataloaders",
    """
import torch
from torch.utils.data import Dataset, DataLoader, TensorDataset

# "Datasets & DataLoaders", with a TensorDataset of made-up images in FashionMNIST's place
labels_map = {0: "T-Shirt", 1: "Trouser", 2: "Pullover", 3: "Dress"}
images = torch.rand(40, 1, 4, 4)
targets = torch.randint(0, 4, (40,))
training_data = TensorDataset(images, targets)

class CustomImageDataset(Dataset):
    def __init__(self, images, labels, transform=None, target_transform=None):
        self.images = images
        self.labels = labels
        self.transform = transform
        self.target_transform = target_transform

    def __len__(self):
        return len(self.labels)

    def __getitem__(self, idx):
        image = self.images[idx]
        label = self.labels[idx].item()
        if self.transform:
            image = self.transform(image)
        if self.target_transform:
            label = self.target_transform(label)
        return image, label

test_data = CustomImageDataset(images[:8], targets[:8], transform=lambda x: x * 2)
img, label = training_data[5]
print(img.shape, labels_map[label.item()])
train_dataloader = DataLoader(training_data, batch_size=16, shuffle=True)
test_dataloader = DataLoader(test_data, batch_size=16, shuffle=True)
train_features, train_labels = next(iter(train_dataloader))
print(f"Feature batch shape: {train_features.size()}")
print(f"Labels batch shape: {train_labels.size()}")
img = train_features[0].squeeze()
label = train_labels[0]
print(img.shape, f"Label: {label}")
test_features, test_labels = next(iter(test_dataloader))
print(test_features.shape, test_labels)
""",
)
S(
    "datautils-tutorial-build-the-neural-network",
    """
import torch
from torch import nn

device = torch.accelerator.current_accelerator().type if torch.accelerator.is_available() else "cpu"
print(f"Using {device} device")

class NeuralNetwork(nn.Module):
    def __init__(self):
        super().__init__()
        self.flatten = nn.Flatten()
        self.linear_relu_stack = nn.Sequential(
            nn.Linear(28*28, 512),
            nn.ReLU(),
            nn.Linear(512, 512),
            nn.ReLU(),
            nn.Linear(512, 10),
        )

    def forward(self, x):
        x = self.flatten(x)
        logits = self.linear_relu_stack(x)
        return logits

model = NeuralNetwork().to(device)
print(model)
X = torch.rand(1, 28, 28, device=device)
logits = model(X)
pred_probab = nn.Softmax(dim=1)(logits)
y_pred = pred_probab.argmax(1)
print(f"Predicted class: {y_pred}")
input_image = torch.rand(3,28,28)
print(input_image.size())
flatten = nn.Flatten()
flat_image = flatten(input_image)
print(flat_image.size())
layer1 = nn.Linear(in_features=28*28, out_features=20)
hidden1 = layer1(flat_image)
print(hidden1.size())
print(f"Before ReLU: {hidden1}\\n\\n")
hidden1 = nn.ReLU()(hidden1)
print(f"After ReLU: {hidden1}")
print(f"Model structure: {model}\\n\\n")
for name, param in model.named_parameters():
    print(f"Layer: {name} | Size: {param.size()} | Values : {param[:2]} \\n")
""",
)
S(
    "datautils-tutorial-d2l-concise-linear-regression",
    """
import torch
from torch.utils import data
from torch import nn

def synthetic_data(w, b, num_examples):
    X = torch.normal(0, 1, (num_examples, len(w)))
    y = torch.matmul(X, w) + b
    y += torch.normal(0, 0.01, y.shape)
    return X, y.reshape((-1, 1))

true_w = torch.tensor([2, -3.4])
true_b = 4.2
features, labels = synthetic_data(true_w, true_b, 1000)

def load_array(data_arrays, batch_size, is_train=True):
    dataset = data.TensorDataset(*data_arrays)
    return data.DataLoader(dataset, batch_size, shuffle=is_train)

batch_size = 10
data_iter = load_array((features, labels), batch_size)
print(next(iter(data_iter)))
net = nn.Sequential(nn.Linear(2, 1))
net[0].weight.data.normal_(0, 0.01)
net[0].bias.data.fill_(0)
loss = nn.MSELoss()
trainer = torch.optim.SGD(net.parameters(), lr=0.03)
num_epochs = 3
for epoch in range(num_epochs):
    for X, y in data_iter:
        l = loss(net(X), y)
        trainer.zero_grad()
        l.backward()
        trainer.step()
    l = loss(net(features), labels)
    print(f'epoch {epoch + 1}, loss {l:f}')
w = net[0].weight.data
print('error in estimating w:', true_w - w.reshape(true_w.shape))
b = net[0].bias.data
print('error in estimating b:', true_b - b)
""",
    long=True,
)
S(
    "datautils-tutorial-d2l-data-iter-by-hand",
    """
import torch

def data_iter(batch_size, features, labels):
    num_examples = len(features)
    indices = torch.randperm(num_examples).tolist()
    for i in range(0, num_examples, batch_size):
        batch_indices = torch.tensor(indices[i: min(i + batch_size, num_examples)])
        yield features[batch_indices], labels[batch_indices]

features = torch.arange(20.).reshape(10, 2)
labels = torch.arange(10.).reshape(-1, 1)
for X, y in data_iter(4, features, labels):
    print(X, '\\n', y)
""",
)
S(
    "datautils-tutorial-makemore-split",
    """
import torch
from torch.utils.data import TensorDataset, DataLoader, random_split

words = ["emma", "olivia", "ava", "isabella", "sophia", "mia", "amelia", "harper"]
chars = sorted(set("".join(words)))
stoi = {s: i + 1 for i, s in enumerate(chars)}
stoi["."] = 0
block_size = 3
X, Y = [], []
for w in words:
    context = [0] * block_size
    for ch in w + ".":
        ix = stoi[ch]
        X.append(context)
        Y.append(ix)
        context = context[1:] + [ix]
X = torch.tensor(X)
Y = torch.tensor(Y)
print(X.shape, Y.shape)
dataset = TensorDataset(X, Y)
g = torch.Generator().manual_seed(2147483647)
train, val, test = random_split(dataset, [0.8, 0.1, 0.1], generator=g)
print(len(train), len(val), len(test))
print(val.indices, test.indices)
Xval, Yval = dataset[val.indices]
print(Xval, Yval)
C = torch.randn((len(stoi), 2), generator=g, requires_grad=True)
loader = DataLoader(train, batch_size=8, shuffle=True, generator=g)
for Xb, Yb in loader:
    emb = C[Xb]
    loss = emb.sum(dim=(1, 2)).mean()
    loss.backward()
print(Xb.shape, Yb)
print(C.grad)
""",
)

# ***** 4. Tensor.random_: the draw a DataLoader's seed is *****

S(
    "datautils-tensor-random-",
    """
import torch
for dt in [torch.int64, torch.int32, torch.int8, torch.uint8, torch.int16, torch.float32,
           torch.float64, torch.bool, torch.float16]:
    torch.manual_seed(0)
    print(dt, torch.empty(4, dtype=dt).random_().tolist())
torch.manual_seed(0)
print(torch.empty(3).random_(5), torch.empty(3, dtype=torch.float64).random_(2**40))
g = torch.Generator().manual_seed(3)
t = torch.empty(2, dtype=torch.int64)
print(t.random_(generator=g), t.random_(10, generator=g), t._version)
print(torch.zeros(3, dtype=torch.int32).random_(-5, 5), torch.empty(2).random_(to=4))
print(torch.empty((), dtype=torch.int64).random_().item())
""",
)
S(
    "datautils-tensor-random-errors",
    """
import torch
for dt in [torch.float16, torch.int8, torch.int16, torch.int32, torch.bool, torch.uint8]:
    for bounds in [(0, 2**24 + 1), (-2**25, 0), (-200, 0), (0, 3), (5, 5), (2, 4)]:
        try:
            torch.manual_seed(0)
            print(dt, bounds, torch.empty(2, dtype=dt).random_(*bounds).tolist())
        except RuntimeError as e:
            print(dt, bounds, e)
x = torch.ones(2, requires_grad=True)
try:
    x.random_()
except RuntimeError as e:
    print(e)
""",
)

# ***** 5. torch.accelerator on a CPU-only PyTorch *****

S(
    "datautils-accelerator-cpu-only",
    """
import torch
A = torch.accelerator
device = torch.accelerator.current_accelerator().type if torch.accelerator.is_available() else "cpu"
print(f"Using {device} device")
print(A.is_available(), A.current_accelerator(), A.device_count())
print(A.current_accelerator(check_available=True))
x = torch.ones(2, device=device)
print(x.device, x.to(device))
import torch.accelerator
from torch.accelerator import is_available, device_count
print(is_available(), device_count())
""",
)
S(
    "datautils-accelerator-device-calls-fail",
    """
import torch
A = torch.accelerator
calls = {
    "synchronize()": lambda: A.synchronize(),
    "synchronize(0)": lambda: A.synchronize(0),
    "synchronize('cpu')": lambda: A.synchronize("cpu"),
    "synchronize('cuda:0')": lambda: A.synchronize("cuda:0"),
    "synchronize(device('cpu'))": lambda: A.synchronize(torch.device("cpu")),
    "set_device_index(0)": lambda: A.set_device_index(0),
    "set_device_index('cpu')": lambda: A.set_device_index("cpu"),
    "current_device_index()": lambda: A.current_device_index(),
    "current_device_idx()": lambda: A.current_device_idx(),
    "current_stream()": lambda: A.current_stream(),
    "get_device_capability()": lambda: A.get_device_capability(),
    "empty_cache()": lambda: A.empty_cache(),
    "memory_allocated()": lambda: A.memory_allocated(),
    "max_memory_allocated(0)": lambda: A.max_memory_allocated(0),
    "is_available(1)": lambda: A.is_available(1),
    "no_such_name": lambda: A.no_such_name,
}
for call, attempt in calls.items():
    try:
        print(call, attempt())
    except (RuntimeError, TypeError, AttributeError) as e:
        print(call, type(e).__name__, e)
""",
)

# ***** 6. torch.set_printoptions *****

S(
    "datautils-printoptions-precision",
    """
import torch
x = torch.tensor([1.123456789, 22.5, -3.0])
m = torch.arange(12.).reshape(3, 4) / 7
torch.set_printoptions(precision=2)
print(x, m)
print(torch.tensor(2 / 3), torch.tensor([1.0, 2.0]), torch.tensor([1e-5, 1.0]))
torch.set_printoptions(precision=8)
print(x, torch.tensor(1 / 3, dtype=torch.float64))
torch.set_printoptions(precision=0)
print(x, torch.tensor([0.5, 1.5, 2.5]), torch.tensor([1e-6, 1.0]))
torch.set_printoptions(precision=3)
w = torch.tensor([[0.12345, -1.5]], requires_grad=True)
print(w, w * 2, torch.nn.Parameter(torch.tensor([1 / 7])))
print(torch.tensor([1.5, 2.25], dtype=torch.float16), torch.tensor([1, 2], dtype=torch.int8))
""",
)
S(
    "datautils-printoptions-threshold-edgeitems",
    """
import torch
torch.set_printoptions(threshold=5)
print(torch.arange(10), torch.arange(10.).reshape(2, 5), torch.tensor([1.0, 2.0]))
torch.set_printoptions(threshold=5, edgeitems=1)
print(torch.arange(10), torch.arange(24.).reshape(2, 3, 4))
torch.set_printoptions(threshold=5, edgeitems=0)
print(torch.arange(10.), torch.arange(24.).reshape(2, 3, 4), torch.arange(10, dtype=torch.int32))
torch.set_printoptions(edgeitems=0)
print(torch.arange(4.), torch.tensor(2.5), torch.tensor([], dtype=torch.int32))
torch.set_printoptions(threshold=0)
print(torch.tensor(3.5), torch.tensor([1.5]), torch.tensor([]), torch.zeros(0, 3))
torch.set_printoptions(threshold=3, edgeitems=2)
print(torch.arange(100).reshape(10, 10))
""",
)
S(
    "datautils-printoptions-linewidth",
    """
import torch
m = torch.arange(120.).reshape(3, 40) / 7
torch.set_printoptions(linewidth=40)
print(m)
print(torch.ones(5, requires_grad=True) * 2)
print(torch.arange(30, dtype=torch.int16))
torch.set_printoptions(linewidth=200)
print(m)
torch.set_printoptions(linewidth=5)
print(torch.tensor([1.5, 2.5, 3.5], requires_grad=True))
""",
)
S(
    "datautils-printoptions-sci-mode",
    """
import torch
x = torch.tensor([1.123456789, 22.5, -3.0])
torch.set_printoptions(sci_mode=True)
print(x, torch.tensor([1.0, 2.0]), torch.tensor(0.0))
print(torch.tensor([float("nan"), 1.0, float("inf")]), torch.tensor([0.0, -0.0]))
torch.set_printoptions(sci_mode=False)
print(torch.tensor([1e-8, 1e10, 1.5]), torch.tensor([1e20, 1.0]), torch.tensor([1e-5]))
torch.set_printoptions(precision=3, sci_mode=True)
print(torch.tensor([1e-8, 1e10, 1.5]))
torch.set_printoptions(precision=3)
print(torch.tensor([1e-8, 1e10, 1.5]))
""",
)
S(
    "datautils-printoptions-profiles",
    """
import torch
x = torch.tensor([1.123456789, 22.5, -3.0])
big = torch.arange(2000.)
m = torch.arange(120.).reshape(3, 40) / 7
torch.set_printoptions(profile="short")
print(x, big, m)
torch.set_printoptions(profile="full")
print(torch.arange(1001))
torch.set_printoptions(profile="full", precision=1)
print(x)
torch.set_printoptions(profile="nonsense")
print(x)
torch.set_printoptions(profile="default")
print(x, big)
torch.set_printoptions(precision=6, sci_mode=True)
torch.set_printoptions()
print(x, torch.tensor([1e-8, 1.0]))
""",
)
S(
    "datautils-printoptions-in-a-training-print",
    """
import torch
from torch import nn
torch.set_printoptions(precision=2, sci_mode=False)
model = nn.Linear(3, 2)
print(model.weight)
print(model.bias)
x = torch.randn(4, 3)
out = model(x)
print(out)
print(f"loss {out.pow(2).mean()}")
torch.set_printoptions(precision=6)
print(out.sum())
""",
)
S(
    "datautils-printoptions-start-fresh",
    """
import torch
print(torch.tensor([1 / 3, 2 / 3]), torch.arange(1200.))
""",
)

# ***** 7. what gradtrace's engine refuses *****

S(
    "datautils-unsupported-persistent-workers",
    """
import torch
from torch.utils.data import DataLoader, TensorDataset
loader = DataLoader(TensorDataset(torch.arange(4)), num_workers=2, persistent_workers=True)
for batch in loader:
    pass
""",
    unsupported=True,
)
S(
    "datautils-unsupported-workers-drawing",
    """
import torch
from torch.utils.data import DataLoader, Dataset

class Noisy(Dataset):
    def __len__(self):
        return 4
    def __getitem__(self, i):
        return torch.rand(1)

for batch in DataLoader(Noisy(), batch_size=2, num_workers=2):
    print(batch)
""",
    unsupported=True,
)
S(
    "datautils-unsupported-iterable-with-workers",
    """
import torch
from torch.utils.data import DataLoader, IterableDataset

class Stream(IterableDataset):
    def __iter__(self):
        return iter(range(4))

print(list(DataLoader(Stream(), num_workers=2)))
""",
    unsupported=True,
)
S(
    "datautils-unsupported-utils-checkpoint",
    """
import torch
import torch.utils.checkpoint
""",
    unsupported=True,
)
S(
    "datautils-unsupported-accelerator-memory-stats",
    """
import torch
stats = torch.accelerator.memory_stats()
""",
    unsupported=True,
)
