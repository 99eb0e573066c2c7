"""Registry of the data files behind :mod:`goalfit.datasets`.

Every dataset lives in one folder (``<root>/<folder>/<file>``, the layout of the
shared data directory, each folder documented by its ``SOURCE.md``).  For each
file the registry records its sha256, its byte size and the public URL it can be
downloaded from:

* the original publisher's URL (the UCI archive, the LIBSVM site) where the file
  is published there as a plain file, with the GitHub copy named in ``SOURCE.md``
  as a mirror tried when the original cannot be reached or does not match;
* the raw GitHub URL of the repository + commit + path named in ``SOURCE.md``
  when the stored file is byte-identical to that copy;
* the UCI archive URL when ``SOURCE.md`` says the file was edited from a GitHub
  copy but the result is the unmodified UCI file;
* ``None`` otherwise (files converted from R ``.rda`` data, files whose
  pristine upstream layout could not be confirmed, files from a Debian
  package); ``FileSpec.note`` says why.  Such files cannot be downloaded from
  their origin; they can still come from a mirror
  (``GOALFIT_DOWNLOAD_MIRROR``) holding the same ``<folder>/<file>`` layout,
  and every downloaded file is checked against the sha256 and size below.

``required=False`` marks files kept for reference (documentation, the original
``.rda`` files, samples) that no loader reads; they are not needed for
:func:`goalfit.datasets.dataset_status` to report a dataset as found.
"""

from __future__ import annotations

from dataclasses import dataclass, field

__all__ = ["FileSpec", "FolderSpec", "REGISTRY", "UCI_ARCHIVE", "github_raw"]

UCI_ARCHIVE = "https://archive.ics.uci.edu/ml/machine-learning-databases"


def github_raw(repo: str, commit: str, path: str) -> str:
    """Return ``https://raw.githubusercontent.com/<repo>/<commit>/<path>``."""
    return f"https://raw.githubusercontent.com/{repo}/{commit}/{path}"


@dataclass(frozen=True)
class FileSpec:
    """One data file of a dataset folder.

    Attributes
    ----------
    name : str
        File name inside the folder.
    sha256 : str
        Expected hex sha256 digest of the file's bytes.
    size : int
        Expected size in bytes.
    url : str or None
        Public URL of a byte-identical copy -- the original publisher's (the UCI
        archive, LIBSVM) where one exists --, or ``None`` when the file cannot be
        downloaded from its origin (see ``note``).
    required : bool
        Whether a loader reads the file (``False`` for reference files).
    note : str
        Why ``url`` is ``None`` (or other provenance remarks).
    mirrors : tuple of str
        Other copies (the GitHub copies named in ``SOURCE.md``), tried in order when
        ``url`` cannot be reached or does not match the checksum.
    """

    name: str
    sha256: str
    size: int
    url: str | None
    required: bool = True
    note: str = ""
    mirrors: tuple = ()


@dataclass(frozen=True)
class FolderSpec:
    """A dataset folder: its title and its files (name -> :class:`FileSpec`)."""

    folder: str
    title: str
    files: dict[str, FileSpec] = field(default_factory=dict)

    @property
    def required_files(self) -> list[str]:
        """Names of the files a loader reads."""
        return [f.name for f in self.files.values() if f.required]


def _folder(folder: str, title: str, *files: FileSpec) -> FolderSpec:
    return FolderSpec(folder, title, {f.name: f for f in files})


# Commits of the GitHub copies named in each SOURCE.md.
_ISAKUYA = ("ISakuya/ML2017-lab-02", "9e7f2e453d45430743664a40aeca34689334a90f")
_GVAZQUEZ = ("gustavovazquez/datasets", "90ffb73eda13fca676ef5b778352246ba260f114")
_JJ4192 = ("jj4192/MLp3", "422e8a7195fee8fe9cccbcc0f7469c133919a499")
_HIEUNM6 = ("HieuNM6/machine_learning_example", "03628ff14d8406cd7af059d5aac1739a69d43dd2")
_KSHANMOL = ("kshanmol/bank-marketing", "d092fa2b95dee66618afa87ffe9eaa8d9bac706f")
_NIRBHIK = ("nirbhik-datta/CrimesInCommunities", "4807c41f1595c0899997332c1067627dd9ea8c70")
_WALACHOWSKA = ("walachowska/Crime_prediction", "df7ae52810d6e6a1b71088d851e54c30f1aedc8c")
_SHAP = ("shap/shap", "df974a1966294b9c7acebb1373fd6dc5445d1d3d")
_PROPUBLICA = ("propublica/compas-analysis", "bafff5da3f2e45eca6c2d5055faad269defd135a")
_FJU = ("fju155447/uci", "11fb7b341154178b42fd194e164b454533055008")
_FAIRML = ("molfat66/FairML", "4198ab8abb915f46f34d496d8e55d42faf00936d")
_PAFER = ("uknowwho/pafer", "2156a51ab19a41b359307d5488c1b5d836aea59f")
_XUXINXIN = ("Xu-xinxin/Counterfactual-fairness", "74d672a3d6fb9d23678fbf632deef293ccaa3e26")
_RAJDEEP = ("rajdeep-cse17/Class_Imbalance", "5ef9e2bc47419dd7b20d0a9f6bb1c665dfebd3a4")
_NEWTONLB = ("newtonlb/ProjetoAM", "0ec4ab9d39f10362448a519804dfe3fc2e7d908f")
_ANDREWWANG = ("andrewwang2015/Analyzing-Student-Performance",
               "c4e7e163debfd6f23d9b2c14cb8673b6ab8ab3de")
_ERIRI = ("Eriri/brb", "96b79c95c7f76cb8a8b93e96a3166c63bbd7a5c8")
_DENSQ42 = ("DensQ42/Wine_Quality_EDA", "2024565a5ad8ba160c468225857cef0b44eda0db")
_MALLISR = ("MallisR/wine-quality", "191ae01990cd309853367efa5d6a4e7a749c02ea")
_BARO = ("Baro1502/Yeasts-Classification", "2c3156166897bc0df0aa40f1861a29d277fa0b54")


def _gh(origin: tuple[str, str], path: str) -> str:
    return github_raw(origin[0], origin[1], path)


def _original(name, sha256, size, url, mirror, **kw) -> FileSpec:
    """A file published by its original source at ``url``, with a GitHub copy as mirror."""
    return FileSpec(name, sha256, size, url, mirrors=(mirror,), **kw)


LIBSVM_BINARY = "https://www.csie.ntu.edu.tw/~cjlin/libsvmtools/datasets/binary"


_MLBENCH = ("converted to CSV from CRAN mlbench's {rda} (Debian package r-cran-mlbench 2.1-3-1); "
            "no public copy of this CSV exists")
_RDA = "taken from the Debian package r-cran-mlbench 2.1-3-1 (a .deb archive, not a plain URL)"

REGISTRY: dict[str, FolderSpec] = {
    spec.folder: spec
    for spec in [
        _folder(
            "adult", "UCI Adult (Census Income)",
            _original("adult.data", "5b00264637dbfec36bdeaab5676b0b309ff9eb788d63554ca0a249491c86603d",
                      3974305, f"{UCI_ARCHIVE}/adult/adult.data", _gh(_JJ4192, "dataset/adult/adult.data")),
            _original("adult.test", "a2a9044bc167a35b2361efbabec64e89d69ce82d9790d2980119aac5fd7e9c05",
                      2003153, f"{UCI_ARCHIVE}/adult/adult.test", _gh(_HIEUNM6, "adult.test")),
            _original("adult.names", "c248284c0b5de30c9e1958d6cdd168a34a654758b620e68f46aefa83fc0a576a",
                      5229, f"{UCI_ARCHIVE}/adult/adult.names", _gh(_JJ4192, "dataset/adult/adult.names"),
                      required=False),
        ),
        _folder(
            "a9a", "LIBSVM a9a (binarized UCI Adult)",
            _original("a9a", "f5d5ffd8d865ff41328e7ee043e4b020816914ff6843ff15b98905ddbedce906",
                      2329875, f"{LIBSVM_BINARY}/a9a", _gh(_ISAKUYA, "a9a")),
            FileSpec("a9a.t", "1f448a153f0320399a7e40836eb207655b0bde0f21fc941cc472193daa9f5de9",
                     1164628, None,
                     note="every public copy adds a dummy token (e.g. '123:0') that was removed here; "
                          "the LIBSVM original is not a UCI file"),
        ),
        _folder(
            "compas", "ProPublica COMPAS two-year recidivism",
            FileSpec("compas-scores-two-years.csv",
                     "c451db85908b2f7fef1d83203bedf6b71ecda0d5af468d82ae62178f91d0cc7d",
                     2546489, _gh(_PROPUBLICA, "compas-scores-two-years.csv")),
            FileSpec("compas-scores-two-years-violent.csv",
                     "918e218ba181d4db8a7266977d23ca7a5ecf1bc7d5defd7b2f27bf3cbd9763e3",
                     1603205, _gh(_PROPUBLICA, "compas-scores-two-years-violent.csv"), required=False),
        ),
        _folder(
            "credit_default", "Default of Credit Card Clients (Taiwan, Yeh & Lien 2009)",
            FileSpec("UCI_Credit_Card.csv", "a0f0ab49d6326671d6cd83be5c88dcf18007025fe9a53ecd699119c871176ca1",
                     2862995, _gh(_FJU, "UCI_Credit_Card.csv")),
        ),
        _folder(
            "communities", "UCI Communities and Crime",
            _original("communities.data", "09e0b5c07eae24c1efab19b2edee05e160e7f5743b6f31e31eec3d73624da2ea",
                      1102815, f"{UCI_ARCHIVE}/communities/communities.data", _gh(_NIRBHIK, "communities.data")),
            _original("communities.names", "80914f24ab37261fb0fbda7e417cad8001335dadda4a8d702c265601ef8434fc",
                      27179, f"{UCI_ARCHIVE}/communities/communities.names",
                      _gh(_WALACHOWSKA, "communities.names")),
            FileSpec("CommViolPredUnnormalizedData.txt",
                     "b090072d0e8d140a936d2411704ed29b2681e4805b805a9c8c6bdb072c5416c3",
                     1555520, _gh(_SHAP, "data/CommViolPredUnnormalizedData.txt"), required=False),
        ),
        _folder(
            "law_school", "LSAC bar passage (Kusner et al. law_data.csv)",
            FileSpec("law_data.csv", "778f7e055d7be170197b73c98d6ce7f18b4f38d5ca1093c6af10bb9fcd75181d",
                     960094, _gh(_XUXINXIN, "law_data.csv")),
        ),
        _folder(
            "german", "Statlog German Credit",
            _original("german.data", "b21f3d81db8071257d5ff1deaeba1fd4303b62712e6fcc9715c7a86202cb5871",
                      79793, f"{UCI_ARCHIVE}/statlog/german/german.data", _gh(_PAFER, "german.data")),
            _original("german.data-numeric", "2752b044394958ab6dd193a0b56ca0f0b3a2d8bc7cb8c008e35a5e84bbec02f8",
                      102000, f"{UCI_ARCHIVE}/statlog/german/german.data-numeric", _gh(_PAFER, "german.data-numeric"),
                      required=False),
            _original("german.doc", "69b92cb551111bc37098698288849c96f0fd87ce81a2e54451ff39aa1e53fe49",
                      4679, f"{UCI_ARCHIVE}/statlog/german/german.doc", _gh(_PAFER, "german.doc"), required=False),
        ),
        _folder(
            "bank_marketing", "UCI Bank Marketing (Moro et al.)",
            # Reconstructed byte-exactly (its git blob id equals the original UCI file's,
            # blob d7a2ede5, which SOURCE.md lists at this repository path).
            FileSpec("bank-full.csv", "d1513ec63b385506f7cfce9f2c5caa9fe99e7ba4e8c3fa264b3aaf0f849ed32d",
                     4610348, _gh(_KSHANMOL, "data/bank-full.csv"),
                     note="reconstructed byte-for-byte (same git blob as the UCI original)"),
            FileSpec("bank.csv", "dc8d576e9bda0f41ee891251bd84bab9a39ce576cba715aac08adc2374a01fde",
                     461474, _gh(_KSHANMOL, "data/bank.csv"), required=False),
            FileSpec("bank-names.txt", "898bdf5589e35c29d55e9b5ade3340b8fa548be1ff98a668b4e726cdad8ad454",
                     3866, _gh(_KSHANMOL, "bank-names.txt"), required=False),
            FileSpec("bank-additional.csv", "7e59cf650004d65d1c9d6b08553bad2ee9a9ad70d594f536e3c584ee6ed5df50",
                     583898, _gh(_KSHANMOL, "bank-additional/bank-additional.csv"), required=False),
            FileSpec("bank-additional-names.txt",
                     "10045462a4c026f858dffa159370c4270510230c1fc63c6c91ca51bba4b3df26",
                     5458, _gh(_KSHANMOL, "bank-additional/bank-additional-names.txt"), required=False),
        ),
        _folder(
            "abalone", "UCI Abalone",
            FileSpec("abalone.data", "de37cdcdcaaa50c309d514f248f7c2302a5f1f88c168905eba23fe2fbc78449f",
                     191873, f"{UCI_ARCHIVE}/abalone/abalone.data",
                     note="the GitHub copy had a header line added; removing it gives the UCI file"),
            _original("abalone.names", "542eee5a2a0ee72db563de010dc3b5055b03c5dc624049ae1f2208fc66a14aac",
                      4319, f"{UCI_ARCHIVE}/abalone/abalone.names", _gh(_GVAZQUEZ, "abalone.names"), required=False),
        ),
        _folder(
            "pageblocks", "UCI Page Blocks Classification",
            FileSpec("page-blocks.data", "52058b6e19ba797b5e80ae6454ebb3b7a25016787e668dd3203393c236d22c78",
                     355745, None,
                     note="decompressed from UCI's page-blocks.data.Z (unix compress, which the Python "
                          "standard library cannot read); no byte-identical plain copy is published"),
            _original("page-blocks.names", "33f6687244f868d84a6e4dae16a0d58a7d9bfb8be9130c9b6bb9e6814d9f751f",
                      3900, f"{UCI_ARCHIVE}/page-blocks/page-blocks.names", _gh(_RAJDEEP, "data/page-blocks.names"),
                      required=False),
        ),
        _folder(
            "satimage", "Statlog Landsat Satellite (satimage)",
            FileSpec("satimage_train.csv", "02cb5fccc521d8e576f305cc34bdf5de332babb6bbb8e9fcb7f65a71e0f3803f",
                     578060, None, note=_MLBENCH.format(rda="Satellite.rda")),
            FileSpec("satimage_test.csv", "dbb628fb4efe49f99142e8c0c507ff96fb0bf881f779ceb1326e471342a765ce",
                     260799, None, note=_MLBENCH.format(rda="Satellite.rda")),
            FileSpec("Satellite.rda", "29f8cf9bb1bc51b769d694c9caf740fd1c36ed6a7c87603edf5985962e330f64",
                     109096, None, required=False, note=_RDA),
        ),
        _folder(
            "shuttle", "Statlog Shuttle",
            FileSpec("shuttle_train.csv", "58c3a395664608fc8bf4ad0f07bb39201ec17c17ad7890c58ce76413a2687257",
                     1426186, None, note=_MLBENCH.format(rda="Shuttle.rda")),
            FileSpec("shuttle_test.csv", "35731efbfd0b43ce1e22a9346abd0ffa829c944d419c8f04990c6c3ea3be8fa6",
                     475569, None, note=_MLBENCH.format(rda="Shuttle.rda")),
            FileSpec("Shuttle.rda", "5b1db218b76a47c83f575f1ff38d7a7d36e569b0e27d8bf4aa92eae6c0bcb826",
                     371492, None, required=False, note=_RDA),
        ),
        _folder(
            "letter", "UCI Letter Recognition",
            FileSpec("letter-recognition.data", "e6957fa840558221f052b11c08177ce385059212548948a671537d58cd532862",
                     712564, None,
                     note="a header line was removed from the only usable GitHub copy, which also lacks "
                          "the final newline; byte identity with the UCI file is not confirmed"),
        ),
        _folder(
            "segment", "UCI Image Segmentation",
            _original("segmentation.data", "b4226a708f25d44fbbe4eae36f0d66326bc46393534c2a0d2b9267ae1302002f",
                      34841, f"{UCI_ARCHIVE}/image/segmentation.data", _gh(_NEWTONLB, "segmentation.data")),
            _original("segmentation.test", "3b5aa7c3559fdc3a165e97d321809b81292084adfc112645e250d90321203685",
                      345083, f"{UCI_ARCHIVE}/image/segmentation.test", _gh(_NEWTONLB, "segmentation.test")),
            _original("segmentation.names", "af695cf6bb1f8616b37c7fbc169940f18a30d3c7f7356e49d4d6015757fe17e3",
                      2449, f"{UCI_ARCHIVE}/image/segmentation.names", _gh(_NEWTONLB, "segmentation.names"),
                      required=False),
        ),
        _folder(
            "vehicle", "Statlog Vehicle Silhouettes",
            FileSpec("vehicle.csv", "1b0dd064acd61cb3d180b360941d4eda993caa0703ad95f8d8d059c9ae091c04",
                     55273, None, note=_MLBENCH.format(rda="Vehicle.rda")),
            FileSpec("Vehicle.rda", "ea993a1fe72b2611a609101aa6ebee43b6a9dd07c329c9acd1a184ba971a2710",
                     15220, None, required=False, note=_RDA),
        ),
        _folder(
            "yeast", "UCI Yeast",
            FileSpec("yeast.data", "ab3f26cae475985f6f1552beb179f6d926022d934b56d7707cda420f855f2062",
                     100912, None,
                     note="a header line was removed from the GitHub copy and its lines start with 4 "
                          "spaces; byte identity with the UCI file is not confirmed"),
            _original("yeast.names", "c0b2d0e8708c1d2484e898749ab13f46fdc797ac49844c6294108db57bcad19e",
                      3313, f"{UCI_ARCHIVE}/yeast/yeast.names", _gh(_BARO, "yeast.names"), required=False),
        ),
        _folder(
            "wine", "UCI Wine",
            _original("wine.data", "6be6b1203f3d51df0b553a70e57b8a723cd405683958204f96d23d7cd6aea659",
                      10782, f"{UCI_ARCHIVE}/wine/wine.data", _gh(_ERIRI, "data/wine.data")),
        ),
        _folder(
            "glass", "UCI Glass Identification",
            FileSpec("glass.csv", "c610d6045e9a29a39a270026ef5f86a7d1c05b0aa06447690a376e7e2df82892",
                     10648, None, note=_MLBENCH.format(rda="Glass.rda")),
            FileSpec("Glass.rda", "dd6d25227d9b49c30a4de04566bec1a2877e790b7690544ad848d847144f32b7",
                     4144, None, required=False, note=_RDA),
        ),
        _folder(
            "wine_quality", "UCI Wine Quality (+ FairML's binarized combined file)",
            FileSpec("winequality-red.csv", "4a402cf041b025d4566d954c3b9ba8635a3a8a01e039005d97d6a710278cf05e",
                     84199, _gh(_DENSQ42, "winequality-red.csv")),
            FileSpec("winequality-white.csv", "76c3f809815c17c07212622f776311faeb31e87610d52c26d87d6e361b169836",
                     264426, _gh(_DENSQ42, "winequality-white.csv")),
            FileSpec("Wine_Quality_Data.csv", "aa9cb850c02f8c0725d11990f60efa1ecd8f5e1f4425045932c33457b05bfcf5",
                     361290, _gh(_FAIRML, "Wine_Quality_Data.csv")),
            FileSpec("winequality.names", "15d215e73b39105952380fd487e4ce1bf5a6b83a425abb285c2ec55193d3ca92",
                     3305, _gh(_MALLISR, "winequality.names"), required=False),
        ),
        _folder(
            "recidivism", "FairML Recidivism (ProPublica-filtered COMPAS, two races)",
            FileSpec("Recidivism_Data.csv", "f11803a079602ac22bab31f07a3f9ea29edf3333f1aa2f9a719c1c299c7882d2",
                     104797, _gh(_FAIRML, "Recidivism_Data.csv")),
        ),
        _folder(
            "credit_taiwan_fairml", "FairML Taiwanese credit default (preprocessed)",
            FileSpec("Taiwanese_Credit_Data.csv", "e46136ef029367f0bd0fce5d9e24ee891f03e4670206a4d0f80f3266c81410f2",
                     2616282, _gh(_FAIRML, "Taiwanese_Credit_Data.csv")),
        ),
        _folder(
            "student_performance", "UCI Student Performance (Cortez & Silva 2008)",
            FileSpec("student-mat.csv", "e47f9ee225e1ee6e69b7564e6dac7123e80b8486677fe111f351964cef5dec80",
                     56993, _gh(_ANDREWWANG, "Datasets/student-mat.csv")),
            FileSpec("student-por.csv", "a7594a11d7771c0efe1a740824e0e833da9c4cad07c39a9766a874575563fb3f",
                     93220, _gh(_ANDREWWANG, "Datasets/student-por.csv")),
            FileSpec("student.txt", "f8d3e734e237071312790ca667330c66d75e706317f8d5e2125c479d70e962c1",
                     3206, _gh(_ANDREWWANG, "Datasets/student.txt"), required=False),
        ),
    ]
}
