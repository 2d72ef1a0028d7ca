//! The one error type of `ftlab-bounds`: inputs for which a bound does not exist.

/// Why a bound cannot be computed. Every message names the offending input and
/// what to change.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
#[non_exhaustive]
pub enum BoundsError {
    /// `pages_per_block` (pi) is below what the schemes need.
    #[error(
        "pages_per_block (pi) is {pages_per_block}: a block needs at least {min} pages \
         (a garbage-collection victim holds at most pi - 1 valid pages); pass the chip's \
         real pages per block, e.g. 64"
    )]
    TooFewPages {
        /// The value given.
        pages_per_block: u32,
        /// The smallest value the calculation accepts.
        min: u32,
    },
    /// `pages_per_block` (pi) is above what a device may have.
    #[error(
        "pages_per_block (pi) is {pages_per_block}: a device's blocks have at most {max} pages \
         (as ftlab's medium accepts); pass the chip's real pages per block, e.g. 64"
    )]
    TooManyPages {
        /// The value given.
        pages_per_block: u32,
        /// The largest value accepted.
        max: u32,
    },
    /// A time is negative, NaN, infinite, zero where it must be positive, or too large.
    #[error(
        "{name} = {value_us} us is not a usable time: give a finite time in microseconds \
         (the data-sheet typical value){positive}",
        positive = if *.must_be_positive { ", greater than zero" } else { ", zero or more" }
    )]
    InvalidTime {
        /// The paper's symbol of the time, e.g. `"t_er"`.
        name: &'static str,
        /// The value given, in microseconds.
        value_us: f64,
        /// Whether zero is refused too.
        must_be_positive: bool,
    },
    /// `t_er < t_rdpg + t_wrpg`: a partial garbage-collection task, whose deadline is
    /// one erase, could not copy a single valid page (alpha = 0, Eq. 7 of 001).
    #[error(
        "t_er = {t_er_us} us is shorter than one valid-page copy t_rdpg + t_wrpg = \
         {copy_us} us, so alpha = floor(t_er / (t_rdpg + t_wrpg)) = 0 (Eq. 7 of 001) and a \
         partial garbage-collection step could never copy a page: check the erase and \
         page times (the papers assume erase is the longest atomic operation)"
    )]
    EraseShorterThanCopy {
        /// The block erase time given.
        t_er_us: f64,
        /// `t_rdpg + t_wrpg`.
        copy_us: f64,
    },
    /// An atomic page operation is longer than the erase, so a partial
    /// garbage-collection step of at most `t_er` (GFTL, 002 Section IV-C) cannot hold it.
    #[error(
        "{op} = {op_us} us is longer than t_er = {t_er_us} us: GFTL splits garbage \
         collection into steps no longer than one erase, which needs every page operation \
         to fit inside t_er; check the chip's times"
    )]
    EraseNotLongest {
        /// The paper's symbol of the longer operation.
        op: &'static str,
        /// Its time.
        op_us: f64,
        /// The block erase time given.
        t_er_us: f64,
    },
    /// A space ratio (sigma) outside the range the scheme accepts.
    #[error("{name} = {value} is outside {range}: {hint}")]
    InvalidSigma {
        /// The paper's symbol, e.g. `"sigma_t"`.
        name: &'static str,
        /// The value given.
        value: f64,
        /// The accepted range, e.g. `"(0, 1]"`.
        range: &'static str,
        /// What to do.
        hint: &'static str,
    },
    /// `N`, the number of blocks, is zero.
    #[error("blocks (N) is 0: give the device's number of physical blocks, or leave it unset")]
    ZeroBlocks,
    /// On-demand Lazy-RTGC: the translation-block garbage collection alone uses up the
    /// last free data block (Eq. 16-17 of 001), so no data page can be valid.
    #[error(
        "on-demand Lazy-RTGC leaves no room for data: with pi = {pages_per_block}, \
         alpha = {alpha} and lambda_t = {lambda_t} (from sigma_t), the partial tasks of one \
         translation-block collection already need every page of the last free data block \
         (Eq. 16-17 of 001); lower sigma_t or use a chip with more pages per block"
    )]
    NoDataSpace {
        /// Pages per block.
        pages_per_block: u32,
        /// Valid copies per partial task (Eq. 7).
        alpha: u32,
        /// Upper bound of valid pages in a victim translation block.
        lambda_t: u32,
    },
}
