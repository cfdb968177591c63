//! Colour maps: 256-entry 8-bit RGB tables, the same as the preview page's
//! (`www/colormaps.js`), so a PNG rendered here and the page's heatmap agree pixel for pixel.
//!
//! - viridis, magma, inferno, plasma: matplotlib's published tables (van der Walt and Smith,
//!   CC0; matplotlib 3.10.9 `lib/matplotlib/_cm_listed.py`, `_viridis_data` etc., 256 RGB
//!   triples in [0, 1]), each component rounded to 8 bits (`round(c * 255)`; viridis' ends are
//!   #440154 and #fde725, as in `www/colormaps.js`).
//! - gray: entry i is (i, i, i), matplotlib's `gray` (black to white) in 8 bits.
//! - RdBu: ColorBrewer's 11-class diverging RdBu interpolated to 256 entries, the table
//!   `www/colormaps.js` builds (`interpolated(RDBU_POINTS)`), copied here as bytes.
//!
//! A normalised value t maps to an entry as matplotlib's `Colormap` does and the page's
//! `lutIndex`: entry = min(255, floor(t * 256)); t <= 0 (and NaN) gives 0, t >= 1 gives 255
//! ([`lut_index`]).

/// A colour map of [`NAMES`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Colormap {
    /// matplotlib's viridis (the default).
    Viridis,
    /// Black to white.
    Gray,
    /// matplotlib's magma.
    Magma,
    /// matplotlib's inferno.
    Inferno,
    /// matplotlib's plasma.
    Plasma,
    /// ColorBrewer's RdBu: dark red (low) through near-white to dark blue (high).
    RdBu,
}

/// The names [`Colormap::from_name`] accepts, as the page and matplotlib spell them.
pub const NAMES: &[&str] = &["viridis", "gray", "magma", "inferno", "plasma", "RdBu"];

impl Colormap {
    /// The map named `name` (one of [`NAMES`], exactly; matplotlib's alias `grey` too), or
    /// `None`.
    pub fn from_name(name: &str) -> Option<Colormap> {
        Some(match name {
            "viridis" => Colormap::Viridis,
            "gray" | "grey" => Colormap::Gray,
            "magma" => Colormap::Magma,
            "inferno" => Colormap::Inferno,
            "plasma" => Colormap::Plasma,
            "RdBu" => Colormap::RdBu,
            _ => return None,
        })
    }

    /// The map's name as in [`NAMES`].
    pub fn name(self) -> &'static str {
        match self {
            Colormap::Viridis => "viridis",
            Colormap::Gray => "gray",
            Colormap::Magma => "magma",
            Colormap::Inferno => "inferno",
            Colormap::Plasma => "plasma",
            Colormap::RdBu => "RdBu",
        }
    }

    /// The 256 entries, `r g b` each (768 bytes; entry i at `3 * i`).
    pub fn table(self) -> &'static [u8; 768] {
        match self {
            Colormap::Viridis => &VIRIDIS,
            Colormap::Gray => &GRAY,
            Colormap::Magma => &MAGMA,
            Colormap::Inferno => &INFERNO,
            Colormap::Plasma => &PLASMA,
            Colormap::RdBu => &RDBU,
        }
    }

    /// The colour of entry `i` as `[r, g, b]`.
    pub fn rgb(self, i: u8) -> [u8; 3] {
        let t = self.table();
        let k = 3 * i as usize;
        [t[k], t[k + 1], t[k + 2]]
    }
}

/// The table entry of a normalised value `t`: t <= 0 and NaN give 0, t >= 1 gives 255, else
/// min(255, floor(t * 256)), as matplotlib's `Colormap.__call__` and `www/colormaps.js`'s
/// `lutIndex`.
#[inline(always)] // called per pixel; the crate is built for size, where it stayed a call
pub fn lut_index(t: f64) -> u8 {
    if t.is_nan() || t <= 0.0 {
        0
    } else if t >= 1.0 {
        255
    } else {
        ((t * 256.0).floor() as u32).min(255) as u8
    }
}

/// 768 bytes from 1536 hex digits (lower case), at compile time.
const fn hex(s: &str) -> [u8; 768] {
    let b = s.as_bytes();
    assert!(b.len() == 1536, "a colour table is 1536 hex digits");
    let mut out = [0u8; 768];
    let mut i = 0;
    while i < 768 {
        out[i] = (digit(b[2 * i]) << 4) | digit(b[2 * i + 1]);
        i += 1;
    }
    out
}

const fn digit(c: u8) -> u8 {
    match c {
        b'0'..=b'9' => c - b'0',
        b'a'..=b'f' => c - b'a' + 10,
        _ => panic!("not a lower-case hex digit"),
    }
}

const GRAY: [u8; 768] = {
    let mut out = [0u8; 768];
    let mut i = 0;
    while i < 768 {
        out[i] = (i / 3) as u8;
        i += 1;
    }
    out
};

const VIRIDIS: [u8; 768] = hex(concat!(
    "44015444025645045745055946075a46085c460a5d460b5e470d60470e61471063471164471365481467481668481769",
    "48186a481a6c481b6d481c6e481d6f481f70482071482173482374482475482576482677482878482979472a7a472c7a",
    "472d7b472e7c472f7d46307e46327e46337f463480453581453781453882443983443a83443b84433d84433e85423f85",
    "4240864241864142874144874045884046883f47883f48893e49893e4a893e4c8a3d4d8a3d4e8a3c4f8a3c508b3b518b",
    "3b528b3a538b3a548c39558c39568c38588c38598c375a8c375b8d365c8d365d8d355e8d355f8d34608d34618d33628d",
    "33638d32648e32658e31668e31678e31688e30698e306a8e2f6b8e2f6c8e2e6d8e2e6e8e2e6f8e2d708e2d718e2c718e",
    "2c728e2c738e2b748e2b758e2a768e2a778e2a788e29798e297a8e297b8e287c8e287d8e277e8e277f8e27808e26818e",
    "26828e26828e25838e25848e25858e24868e24878e23888e23898e238a8d228b8d228c8d228d8d218e8d218f8d21908d",
    "21918c20928c20928c20938c1f948c1f958b1f968b1f978b1f988b1f998a1f9a8a1e9b8a1e9c891e9d891f9e891f9f88",
    "1fa0881fa1881fa1871fa28720a38620a48621a58521a68522a78522a88423a98324aa8325ab8225ac8226ad8127ad81",
    "28ae8029af7f2ab07f2cb17e2db27d2eb37c2fb47c31b57b32b67a34b67935b77937b87838b9773aba763bbb753dbc74",
    "3fbc7340bd7242be7144bf7046c06f48c16e4ac16d4cc26c4ec36b50c46a52c56954c56856c66758c7655ac8645cc863",
    "5ec96260ca6063cb5f65cb5e67cc5c69cd5b6ccd5a6ece5870cf5773d05675d05477d1537ad1517cd2507fd34e81d34d",
    "84d44b86d54989d5488bd6468ed64590d74393d74195d84098d83e9bd93c9dd93ba0da39a2da37a5db36a8db34aadc32",
    "addc30b0dd2fb2dd2db5de2bb8de29bade28bddf26c0df25c2df23c5e021c8e020cae11fcde11dd0e11cd2e21bd5e21a",
    "d8e219dae319dde318dfe318e2e418e5e419e7e419eae51aece51befe51cf1e51df4e61ef6e620f8e621fbe723fde725",
));

const MAGMA: [u8; 768] = hex(concat!(
    "00000401000501010601010802010902020b02020d03030f03031204041405041606051806051a07061c08071e090720",
    "0a08220b09240c09260d0a290e0b2b100b2d110c2f120d31130d34140e36150e38160f3b180f3d19103f1a10421c1044",
    "1d11471e114920114b21114e22115024125325125527125829115a2a115c2c115f2d11612f1163311165331067341069",
    "36106b38106c390f6e3b0f703d0f713f0f72400f74420f75440f764510774710784910784a10794c117a4e117b4f127b",
    "51127c52137c54137d56147d57157e59157e5a167e5c167f5d177f5f187f601880621980641a80651a80671b80681c81",
    "6a1c816b1d816d1d816e1e81701f81721f817320817521817621817822817922827b23827c23827e2482802582812581",
    "8326818426818627818827818928818b29818c29818e2a81902a81912b81932b80942c80962c80982d80992d809b2e7f",
    "9c2e7f9e2f7fa02f7fa1307ea3307ea5317ea6317da8327daa337dab337cad347cae347bb0357bb2357bb3367ab5367a",
    "b73779b83779ba3878bc3978bd3977bf3a77c03a76c23b75c43c75c53c74c73d73c83e73ca3e72cc3f71cd4071cf4070",
    "d0416fd2426fd3436ed5446dd6456cd8456cd9466bdb476adc4869de4968df4a68e04c67e24d66e34e65e44f64e55064",
    "e75263e85362e95462ea5661eb5760ec5860ed5a5fee5b5eef5d5ef05f5ef1605df2625df2645cf3655cf4675cf4695c",
    "f56b5cf66c5cf66e5cf7705cf7725cf8745cf8765cf9785df9795df97b5dfa7d5efa7f5efa815ffb835ffb8560fb8761",
    "fc8961fc8a62fc8c63fc8e64fc9065fd9266fd9467fd9668fd9869fd9a6afd9b6bfe9d6cfe9f6dfea16efea36ffea571",
    "fea772fea973feaa74feac76feae77feb078feb27afeb47bfeb67cfeb77efeb97ffebb81febd82febf84fec185fec287",
    "fec488fec68afec88cfeca8dfecc8ffecd90fecf92fed194fed395fed597fed799fed89afdda9cfddc9efddea0fde0a1",
    "fde2a3fde3a5fde5a7fde7a9fde9aafdebacfcecaefceeb0fcf0b2fcf2b4fcf4b6fcf6b8fcf7b9fcf9bbfcfbbdfcfdbf",
));

const INFERNO: [u8; 768] = hex(concat!(
    "00000401000501010601010802010a02020c02020e03021004031204031405041706041907051b08051d09061f0a0722",
    "0b07240c08260d08290e092b10092d110a30120a32140b34150b37160b39180c3c190c3e1b0c411c0c431e0c451f0c48",
    "210c4a230c4c240c4f260c51280b53290b552b0b572d0b592f0a5b310a5c320a5e340a5f3609613809623909633b0964",
    "3d09653e0966400a67420a68440a68450a69470b6a490b6a4a0c6b4c0c6b4d0d6c4f0d6c510e6c520e6d540f6d550f6d",
    "57106e59106e5a116e5c126e5d126e5f136e61136e62146e64156e65156e67166e69166e6a176e6c186e6d186e6f196e",
    "71196e721a6e741a6e751b6e771c6d781c6d7a1d6d7c1d6d7d1e6d7f1e6c801f6c82206c84206b85216b87216b88226a",
    "8a226a8c23698d23698f24699025689225689326679526679727669827669a28659b29649d29649f2a63a02a63a22b62",
    "a32c61a52c60a62d60a82e5fa92e5eab2f5ead305dae305cb0315bb1325ab3325ab43359b63458b73557b93556ba3655",
    "bc3754bd3853bf3952c03a51c13a50c33b4fc43c4ec63d4dc73e4cc83f4bca404acb4149cc4248ce4347cf4446d04545",
    "d24644d34743d44842d54a41d74b3fd84c3ed94d3dda4e3cdb503bdd513ade5238df5337e05536e15635e25734e35933",
    "e45a31e55c30e65d2fe75e2ee8602de9612bea632aeb6429eb6628ec6726ed6925ee6a24ef6c23ef6e21f06f20f1711f",
    "f1731df2741cf3761bf37819f47918f57b17f57d15f67e14f68013f78212f78410f8850ff8870ef8890cf98b0bf98c0a",
    "f98e09fa9008fa9207fa9407fb9606fb9706fb9906fb9b06fb9d07fc9f07fca108fca309fca50afca60cfca80dfcaa0f",
    "fcac11fcae12fcb014fcb216fcb418fbb61afbb81dfbba1ffbbc21fbbe23fac026fac228fac42afac62df9c72ff9c932",
    "f9cb35f8cd37f8cf3af7d13df7d340f6d543f6d746f5d949f5db4cf4dd4ff4df53f4e156f3e35af3e55df2e661f2e865",
    "f2ea69f1ec6df1ed71f1ef75f1f179f2f27df2f482f3f586f3f68af4f88ef5f992f6fa96f8fb9af9fc9dfafda1fcffa4",
));

const PLASMA: [u8; 768] = hex(concat!(
    "0d088710078813078916078a19068c1b068d1d068e20068f2206902406912605912805922a05932c05942e05952f0596",
    "31059733059735049837049938049a3a049a3c049b3e049c3f049c41049d43039e44039e46039f48039f4903a04b03a1",
    "4c02a14e02a25002a25102a35302a35502a45601a45801a45901a55b01a55c01a65e01a66001a66100a76300a76400a7",
    "6600a76700a86900a86a00a86c00a86e00a86f00a87100a87201a87401a87501a87701a87801a87a02a87b02a87d03a8",
    "7e03a88004a88104a78305a78405a78606a68707a68808a68a09a58b0aa58d0ba58e0ca48f0da4910ea3920fa39410a2",
    "9511a19613a19814a099159f9a169f9c179e9d189d9e199da01a9ca11b9ba21d9aa31e9aa51f99a62098a72197a82296",
    "aa2395ab2494ac2694ad2793ae2892b02991b12a90b22b8fb32c8eb42e8db52f8cb6308bb7318ab83289ba3388bb3488",
    "bc3587bd3786be3885bf3984c03a83c13b82c23c81c33d80c43e7fc5407ec6417dc7427cc8437bc9447aca457acb4679",
    "cc4778cc4977cd4a76ce4b75cf4c74d04d73d14e72d24f71d35171d45270d5536fd5546ed6556dd7566cd8576bd9586a",
    "da5a6ada5b69db5c68dc5d67dd5e66de5f65de6164df6263e06363e16462e26561e26660e3685fe4695ee56a5de56b5d",
    "e66c5ce76e5be76f5ae87059e97158e97257ea7457eb7556eb7655ec7754ed7953ed7a52ee7b51ef7c51ef7e50f07f4f",
    "f0804ef1814df1834cf2844bf3854bf3874af48849f48948f58b47f58c46f68d45f68f44f79044f79143f79342f89441",
    "f89540f9973ff9983ef99a3efa9b3dfa9c3cfa9e3bfb9f3afba139fba238fca338fca537fca636fca835fca934fdab33",
    "fdac33fdae32fdaf31fdb130fdb22ffdb42ffdb52efeb72dfeb82cfeba2cfebb2bfebd2afebe2afec029fdc229fdc328",
    "fdc527fdc627fdc827fdca26fdcb26fccd25fcce25fcd025fcd225fbd324fbd524fbd724fad824fada24f9dc24f9dd25",
    "f8df25f8e125f7e225f7e425f6e626f6e826f5e926f5eb27f4ed27f3ee27f3f027f2f227f1f426f1f525f0f724f0f921",
));

const RDBU: [u8; 768] = hex(concat!(
    "67001f6a011f6d02207003207304217605217906227c07227f0823810823840924870a248a0b258d0c25900d26930e26",
    "960f279910279c11279f1228a21328a51429a81529ab162aae172ab1182bb3192cb41c2db61f2eb72230b82531ba2832",
    "bb2a34bd2d35be3036bf3338c13639c2383ac43b3cc53e3dc6413ec84440c94741cb4942cc4c44ce4f45cf5246d05548",
    "d25849d35a4ad55d4cd6604dd7634fd86551da6853db6b55dc6e57dd7059de735cdf765ee17860e27b62e37e64e48066",
    "e58368e6866ae8896ce98b6eea8e70eb9172ec9374ee9677ef9979f09c7bf19e7df2a17ff3a481f4a683f5a886f5aa89",
    "f5ac8bf6af8ef6b191f6b394f7b596f7b799f7b99cf8bb9ef8bda1f8bfa4f9c2a7f9c4a9f9c6acfac8affacab1fbccb4",
    "fbceb7fbd0b9fcd3bcfcd5bffcd7c2fdd9c4fddbc7fddcc9fdddcbfcdecdfcdfcffce0d0fce2d2fbe3d4fbe4d6fbe5d8",
    "fbe6dafae7dcfae8defae9dffaeae1f9ebe3f9ede5f9eee7f9efe9f9f0ebf8f1edf8f2eff8f3f0f8f4f2f7f5f4f7f6f6",
    "f6f7f7f5f6f7f3f5f6f2f5f6f0f4f6eff3f5edf2f5ecf2f5eaf1f5e9f0f4e7f0f4e6eff4e4eef4e3edf3e1edf3e0ecf3",
    "deebf2ddebf2dbeaf2dae9f2d8e9f1d7e8f1d5e7f1d4e6f1d2e6f0d1e5f0cfe4efcce2efcae1eec7e0edc5dfecc2ddec",
    "c0dcebbddbeabbdaeab8d8e9b6d7e8b3d6e8b1d5e7aed3e6acd2e5a9d1e5a7d0e4a5cee3a2cde3a0cce29dcbe19bc9e0",
    "98c8e096c7df93c6de90c4dd8dc2dc8ac0db87beda84bcd981bad87eb8d77bb6d678b4d575b2d471b0d36eaed26bacd1",
    "68abd065a9cf62a7ce5fa5cd5ca3cb59a1ca569fc9529dc84f9bc74c99c64997c54695c44393c34291c2408fc13f8ec0",
    "3e8cbf3c8abe3b88be3a87bd3885bc3783bb3681ba3480b9337eb8327cb7307ab62f79b52e77b52c75b42b73b32a71b2",
    "2870b1276eb0266caf246aae2369ad2267ac2065ab1f63a81e61a51d5fa21c5c9f1b5a9c1a5899195696185493175290",
    "15508d144e8a134c8712498411478110457e0f437b0e41790d3f760c3d730a3b7009386d08366a073467063264053061",
));

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ends_of_the_tables_are_matplotlibs() {
        assert_eq!(Colormap::Viridis.rgb(0), [0x44, 0x01, 0x54]);
        assert_eq!(Colormap::Viridis.rgb(255), [0xfd, 0xe7, 0x25]);
        assert_eq!(Colormap::Magma.rgb(0), [0x00, 0x00, 0x04]);
        assert_eq!(Colormap::Magma.rgb(255), [0xfc, 0xfd, 0xbf]);
        assert_eq!(Colormap::Inferno.rgb(255), [0xfc, 0xff, 0xa4]);
        assert_eq!(Colormap::Plasma.rgb(0), [0x0d, 0x08, 0x87]);
        assert_eq!(Colormap::Plasma.rgb(255), [0xf0, 0xf9, 0x21]);
        assert_eq!(Colormap::Gray.rgb(128), [128, 128, 128]);
        assert_eq!(Colormap::RdBu.rgb(0), [103, 0, 31]);
        assert_eq!(Colormap::RdBu.rgb(255), [5, 48, 97]);
    }

    #[test]
    fn names_round_trip() {
        for n in NAMES {
            assert_eq!(Colormap::from_name(n).unwrap().name(), *n);
        }
        assert_eq!(Colormap::from_name("Viridis"), None);
    }

    #[test]
    fn lut_index_as_the_page() {
        assert_eq!(lut_index(f64::NAN), 0);
        assert_eq!(lut_index(-1.0), 0);
        assert_eq!(lut_index(0.0), 0);
        assert_eq!(lut_index(0.5), 128);
        assert_eq!(lut_index(255.0 / 256.0), 255);
        assert_eq!(lut_index(254.99 / 256.0), 254);
        assert_eq!(lut_index(1.0), 255);
        assert_eq!(lut_index(7.0), 255);
    }
}
