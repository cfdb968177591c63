//! PNG files from 8-bit RGBA pixels, by the `png` crate (image-rs; PNG 1.2, ISO/IEC 15948).

/// The PNG file of an image `width` x `height` pixels whose `rgba` holds 4 bytes (r, g, b,
/// alpha; straight, not premultiplied) per pixel, row by row from the top, left to right
/// (`rgba.len() == 4 * width * height`). Colour type 6 (RGBA), bit depth 8, no gamma or
/// colour-space chunks (sRGB by convention), each row with the Up filter and compressed by
/// fdeflate (the crate's `Fastest` level: a colour-mapped image is mostly runs and smooth
/// gradients, and a preview is made per request).
///
/// # Errors
/// The encoder's message when the sizes disagree or exceed PNG's limits (width and height
/// 1 to 2^31 - 1).
pub fn encode_rgba(width: u32, height: u32, rgba: &[u8]) -> Result<Vec<u8>, String> {
    let expected = 4 * width as u64 * height as u64;
    if rgba.len() as u64 != expected {
        return Err(format!(
            "{} bytes of pixels for a {width} x {height} RGBA image, which needs {expected}",
            rgba.len()
        ));
    }
    let mut out = Vec::with_capacity(rgba.len() / 4 + 1024);
    let mut encoder = png::Encoder::new(&mut out, width, height);
    encoder.set_color(png::ColorType::Rgba);
    encoder.set_depth(png::BitDepth::Eight);
    encoder.set_compression(png::Compression::Fastest);
    let mut writer = encoder.write_header().map_err(|e| e.to_string())?;
    writer.write_image_data(rgba).map_err(|e| e.to_string())?;
    writer.finish().map_err(|e| e.to_string())?;
    Ok(out)
}
